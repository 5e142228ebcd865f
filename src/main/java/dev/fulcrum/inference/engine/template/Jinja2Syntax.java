package dev.fulcrum.inference.engine.template;

import static jinjava.de.odysseus.el.tree.impl.Scanner.Symbol.AND;
import static jinjava.de.odysseus.el.tree.impl.Scanner.Symbol.COLON;
import static jinjava.de.odysseus.el.tree.impl.Scanner.Symbol.COMMA;
import static jinjava.de.odysseus.el.tree.impl.Scanner.Symbol.DIV;
import static jinjava.de.odysseus.el.tree.impl.Scanner.Symbol.DOT;
import static jinjava.de.odysseus.el.tree.impl.Scanner.Symbol.EQ;
import static jinjava.de.odysseus.el.tree.impl.Scanner.Symbol.EXTENSION;
import static jinjava.de.odysseus.el.tree.impl.Scanner.Symbol.IDENTIFIER;
import static jinjava.de.odysseus.el.tree.impl.Scanner.Symbol.LBRACK;
import static jinjava.de.odysseus.el.tree.impl.Scanner.Symbol.LPAREN;
import static jinjava.de.odysseus.el.tree.impl.Scanner.Symbol.MINUS;
import static jinjava.de.odysseus.el.tree.impl.Scanner.Symbol.MOD;
import static jinjava.de.odysseus.el.tree.impl.Scanner.Symbol.MUL;
import static jinjava.de.odysseus.el.tree.impl.Scanner.Symbol.NE;
import static jinjava.de.odysseus.el.tree.impl.Scanner.Symbol.NOT;
import static jinjava.de.odysseus.el.tree.impl.Scanner.Symbol.OR;
import static jinjava.de.odysseus.el.tree.impl.Scanner.Symbol.PLUS;
import static jinjava.de.odysseus.el.tree.impl.Scanner.Symbol.RBRACK;

import java.util.ArrayList;
import java.util.List;

import com.hubspot.jinjava.el.ExtendedSyntaxBuilder;
import com.hubspot.jinjava.el.ext.AstNamedParameter;
import com.hubspot.jinjava.el.ext.ExtendedParser;
import com.hubspot.jinjava.el.ext.ExtendedScanner;
import com.hubspot.jinjava.el.ext.NamedParameterOperator;

import jinjava.de.odysseus.el.tree.TreeBuilder;
import jinjava.de.odysseus.el.tree.impl.Builder.Feature;
import jinjava.de.odysseus.el.tree.impl.Parser;
import jinjava.de.odysseus.el.tree.impl.Parser.ExtensionPoint;
import jinjava.de.odysseus.el.tree.impl.Scanner;
import jinjava.de.odysseus.el.tree.impl.Scanner.Symbol;
import jinjava.de.odysseus.el.tree.impl.Scanner.Token;
import jinjava.de.odysseus.el.tree.impl.ast.AstBinary;
import jinjava.de.odysseus.el.tree.impl.ast.AstBracket;
import jinjava.de.odysseus.el.tree.impl.ast.AstDot;
import jinjava.de.odysseus.el.tree.impl.ast.AstNode;
import jinjava.de.odysseus.el.tree.impl.ast.AstParameters;
import jinjava.de.odysseus.el.tree.impl.ast.AstUnary;

/**
 * Jinja2's expression grammar where Jinjava's differs in ways chat templates depend on:
 * <ul>
 * <li>{@code ==} compares as Python does, without JUEL's conversions ({@code 1 == '1'} is false);</li>
 * <li>{@code and} and {@code or} return an operand, as in Python ({@code a and 'x'} is {@code 'x'}, not {@code true}),
 * with Python's truth;</li>
 * <li>{@code not} binds looser than comparisons and tests: {@code not tools is defined} is
 * {@code not (tools is defined)} and {@code not calls|length == 1} is {@code not (calls|length == 1)} (Llama 3.x),
 * where Jinjava negates the left operand first;</li>
 * <li>a keyword argument takes a whole expression: {@code namespace(i=messages|length - 1)} (Qwen3), where Jinjava
 * subtracts from the keyword argument;</li>
 * <li>{@code +} fails where Python's does (a string and an undefined value), and {@code *} repeats strings and
 * lists;</li>
 * <li>slices take a step: {@code messages[::-1]} (Qwen3), {@code text[1:5:2]}, with Python's bounds;</li>
 * <li>string literals take Python's escapes (Unicode, hexadecimal and octal ones, {@code \v}, {@code \a}, an unknown
 * escape kept as written).</li>
 * </ul>
 * Jinjava hard-wires its parser into its expression factory; {@link Jinja2Environment} gives it one that builds this
 * one's trees. Python's operators are in {@link PythonOperators}, its slices in {@link PythonSlice}.
 */
final class Jinja2Syntax {

    private Jinja2Syntax() {
    }

    /** Builds the trees of Jinjava's expressions with this grammar. */
    static TreeBuilder treeBuilder() {
        return new Jinja2Builder();
    }

    private static final class Jinja2Builder extends ExtendedSyntaxBuilder {
        private static final long serialVersionUID = 1L;

        Jinja2Builder() {
            super(Feature.METHOD_INVOCATIONS, Feature.VARARGS);
        }

        @Override
        protected Parser createParser(String expression) {
            return new Jinja2Parser(this, expression);
        }
    }

    private static final class Jinja2Parser extends ExtendedParser {

        Jinja2Parser(Jinja2Builder builder, String input) {
            super(builder, input);
        }

        @Override
        protected Scanner createScanner(String expression) {
            return new Jinja2Scanner(expression);
        }

        /** Jinjava's {@code or()}, with Python's {@code or}: the first true operand, else the last. */
        @Override
        protected AstNode or(boolean required) throws Scanner.ScanException, ParseException {
            AstNode v = and(required);
            if (v == null) {
                return null;
            }
            while (true) {
                if (getToken().getSymbol() == OR) {
                    consumeToken();
                    v = createAstBinary(v, and(true), PythonOperators.OR);
                } else if (getToken().getSymbol() == EXTENSION
                        && getExtensionHandler(getToken()).getExtensionPoint() == ExtensionPoint.OR) {
                    v = getExtensionHandler(consumeToken()).createAstNode(v, and(true));
                } else {
                    return v;
                }
            }
        }

        /** JUEL's {@code and()}, with Python's {@code and}: the first false operand, else the last. */
        @Override
        protected AstNode and(boolean required) throws Scanner.ScanException, ParseException {
            AstNode v = eq(required);
            if (v == null) {
                return null;
            }
            while (true) {
                if (getToken().getSymbol() == AND) {
                    consumeToken();
                    v = createAstBinary(v, eq(true), PythonOperators.AND);
                } else if (getToken().getSymbol() == EXTENSION
                        && getExtensionHandler(getToken()).getExtensionPoint() == ExtensionPoint.AND) {
                    v = getExtensionHandler(consumeToken()).createAstNode(v, eq(true));
                } else {
                    return v;
                }
            }
        }

        /** Jinja2's {@code not_expr: 'not' not_expr | compare}, with Python's {@code ==} and {@code !=}. */
        @Override
        protected AstNode eq(boolean required) throws Scanner.ScanException, ParseException {
            if (getToken().getSymbol() == NOT) {
                consumeToken();
                return createAstUnary(eq(true), AstUnary.NOT);
            }
            AstNode v = cmp(required);
            if (v == null) {
                return null;
            }
            while (true) {
                Symbol symbol = getToken().getSymbol();
                if (symbol == EQ || symbol == NE) {
                    consumeToken();
                    v = createAstBinary(v, cmp(true),
                            symbol == EQ ? PythonOperators.EQUALS : PythonOperators.NOT_EQUALS);
                } else if (symbol == EXTENSION
                        && getExtensionHandler(getToken()).getExtensionPoint() == ExtensionPoint.EQ) {
                    v = getExtensionHandler(consumeToken()).createAstNode(v, cmp(true));
                } else {
                    return v;
                }
            }
        }

        /** Jinjava's {@code add()}, with Python's {@code +}. */
        @Override
        protected AstNode add(boolean required) throws Scanner.ScanException, ParseException {
            AstNode v = mul(required);
            if (v == null) {
                return null;
            }
            while (true) {
                Symbol symbol = getToken().getSymbol();
                if (symbol == PLUS || symbol == MINUS) {
                    consumeToken();
                    v = createAstBinary(v, mul(true), symbol == PLUS ? PythonOperators.PLUS : AstBinary.SUB);
                } else if (symbol == EXTENSION
                        && getExtensionHandler(getToken()).getExtensionPoint() == ExtensionPoint.ADD) {
                    v = getExtensionHandler(consumeToken()).createAstNode(v, mul(true));
                } else {
                    return v;
                }
            }
        }

        /** Jinjava's {@code mul()} (natural operator precedence), with Python's repetition of strings and lists. */
        @Override
        protected AstNode mul(boolean required) throws Scanner.ScanException, ParseException {
            AstNode v = filter(required);
            if (v == null) {
                return null;
            }
            while (true) {
                Symbol symbol = getToken().getSymbol();
                if (symbol == MUL || symbol == DIV || symbol == MOD) {
                    consumeToken();
                    v = createAstBinary(v, filter(true),
                            symbol == MUL ? PythonOperators.TIMES : symbol == DIV ? AstBinary.DIV : AstBinary.MOD);
                } else if (symbol == EXTENSION
                        && getExtensionHandler(getToken()).getExtensionPoint() == ExtensionPoint.MUL) {
                    v = getExtensionHandler(consumeToken()).createAstNode(v, filter(true));
                } else {
                    return v;
                }
            }
        }

        @Override
        protected AstParameters params(Symbol left, Symbol right) throws Scanner.ScanException, ParseException {
            consumeToken(left);
            List<AstNode> parameters = new ArrayList<>();
            AstNode parameter = parameter();
            while (parameter != null) {
                parameters.add(parameter);
                if (getToken().getSymbol() != COMMA) {
                    break;
                }
                consumeToken();
                parameter = parameter(); // null after a trailing comma, as Python allows
            }
            consumeToken(right);
            return createAstParameters(parameters);
        }

        private AstNode parameter() throws Scanner.ScanException, ParseException {
            if (getToken().getSymbol() == IDENTIFIER && lookahead(0) == NamedParameterOperator.TOKEN) {
                String name = consumeToken().getImage();
                consumeToken();
                return new AstNamedParameter(identifier(name), expr(true));
            }
            return expr(false);
        }

        /** Jinjava's {@code value()} (natural operator precedence), with Python's slices. */
        @Override
        protected AstNode value() throws Scanner.ScanException, ParseException {
            boolean lvalue = true;
            AstNode v = nonliteral();
            if (v == null) {
                v = literal();
                if (v == null) {
                    return null;
                }
                lvalue = false;
            }
            while (true) {
                if (getToken().getSymbol() == DOT) {
                    consumeToken();
                    AstDot dot = createAstDot(v, consumeToken(IDENTIFIER).getImage(), lvalue);
                    v = getToken().getSymbol() == LPAREN && context.isEnabled(Feature.METHOD_INVOCATIONS)
                            ? createAstMethod(dot, params())
                            : dot;
                } else if (getToken().getSymbol() == LBRACK) {
                    consumeToken();
                    AstNode index = getToken().getSymbol() == COLON ? null : expr(true);
                    if (getToken().getSymbol() == COLON) {
                        v = slice(v, index);
                    } else {
                        consumeToken(RBRACK);
                        AstBracket bracket = createAstBracket(v, index, lvalue,
                                !context.isEnabled(Feature.NULL_PROPERTIES));
                        v = getToken().getSymbol() == LPAREN && context.isEnabled(Feature.METHOD_INVOCATIONS)
                                ? createAstMethod(bracket, params())
                                : bracket;
                    }
                } else {
                    return v;
                }
            }
        }

        private AstNode slice(AstNode base, AstNode start) throws Scanner.ScanException, ParseException {
            consumeToken(COLON);
            AstNode stop = bound();
            AstNode step = null;
            if (getToken().getSymbol() == COLON) {
                consumeToken();
                step = bound();
            }
            consumeToken(RBRACK);
            return new PythonSlice(base, start, stop, step);
        }

        private AstNode bound() throws Scanner.ScanException, ParseException {
            Symbol next = getToken().getSymbol();
            return next == COLON || next == RBRACK ? null : expr(true);
        }
    }

    /** Python's string literal escapes, as Jinja2 decodes them ({@code unicode-escape}). */
    private static final class Jinja2Scanner extends ExtendedScanner {

        Jinja2Scanner(String input) {
            super(input);
        }

        @Override
        protected Token nextString() throws ScanException {
            builder.setLength(0);
            String input = getInput();
            char quote = input.charAt(getPosition());
            int i = getPosition() + 1;
            while (i < input.length()) {
                char c = input.charAt(i++);
                if (c == quote) {
                    return token(Symbol.STRING, builder.toString(), i - getPosition());
                }
                if (c != '\\' || i == input.length()) {
                    builder.append(c);
                    continue;
                }
                char e = input.charAt(i++);
                switch (e) {
                    case '\n' -> {
                    } // a line continuation
                    case '\\', '\'', '"' -> builder.append(e);
                    case 'n' -> builder.append('\n');
                    case 't' -> builder.append('\t');
                    case 'r' -> builder.append('\r');
                    case 'b' -> builder.append('\b');
                    case 'f' -> builder.append('\f');
                    case 'v' -> builder.append('\u000b');
                    case 'a' -> builder.append('\u0007');
                    case 'x' -> i = hex(input, i, 2);
                    case 'u' -> i = hex(input, i, 4);
                    case 'U' -> i = hex(input, i, 8);
                    default -> {
                        if (e >= '0' && e <= '7') {
                            int end = i - 1;
                            while (end < input.length() && end < i + 2 && input.charAt(end) >= '0'
                                    && input.charAt(end) <= '7') {
                                end++;
                            }
                            builder.append((char) Integer.parseInt(input.substring(i - 1, end), 8));
                            i = end;
                        } else {
                            builder.append('\\').append(e); // Python keeps an unknown escape as written
                        }
                    }
                }
            }
            throw new ScanException(getPosition(), "unterminated string", String.valueOf(quote));
        }

        private int hex(String input, int at, int digits) throws ScanException {
            if (at + digits > input.length()) {
                throw new ScanException(at, "truncated \\x, \\u or \\U escape", digits + " hex digits");
            }
            try {
                builder.appendCodePoint(Integer.parseInt(input.substring(at, at + digits), 16));
            } catch (IllegalArgumentException notHex) {
                throw new ScanException(at, "truncated \\x, \\u or \\U escape", digits + " hex digits");
            }
            return at + digits;
        }
    }
}

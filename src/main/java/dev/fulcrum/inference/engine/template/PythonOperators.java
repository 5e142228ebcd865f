package dev.fulcrum.inference.engine.template;

import java.util.ArrayList;
import java.util.List;

import com.hubspot.jinjava.objects.SafeString;
import com.hubspot.jinjava.objects.collections.PyList;

import jinjava.de.odysseus.el.misc.NumberOperations;
import jinjava.de.odysseus.el.misc.TypeConverter;
import jinjava.de.odysseus.el.tree.Bindings;
import jinjava.de.odysseus.el.tree.impl.ast.AstBinary;
import jinjava.de.odysseus.el.tree.impl.ast.AstNode;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELException;

/**
 * Python's operators where JUEL's differ, for {@link Jinja2Syntax}: comparisons without conversions, {@code and} and
 * {@code or} that return an operand, {@code +} that refuses what Python refuses, {@code *} that repeats sequences.
 */
final class PythonOperators {

    private PythonOperators() {
    }

    /** Python's {@code ==}: no conversions between strings and numbers ({@code 1 == '1'} is false). */
    static final AstBinary.Operator EQUALS = new AstBinary.SimpleOperator() {
        @Override
        protected Object apply(TypeConverter converter, Object left, Object right) {
            return PythonValues.equal(left, right);
        }

        @Override
        public String toString() {
            return "==";
        }
    };

    static final AstBinary.Operator NOT_EQUALS = new AstBinary.SimpleOperator() {
        @Override
        protected Object apply(TypeConverter converter, Object left, Object right) {
            return !PythonValues.equal(left, right);
        }

        @Override
        public String toString() {
            return "!=";
        }
    };

    /** Python's {@code or}: evaluates the right operand only when the left one is false, and returns an operand. */
    static final AstBinary.Operator OR = new AstBinary.Operator() {
        @Override
        public Object eval(Bindings bindings, ELContext context, AstNode left, AstNode right) {
            Object value = left.eval(bindings, context);
            return PythonValues.truthy(value) ? value : right.eval(bindings, context);
        }

        @Override
        public String toString() {
            return "or";
        }
    };

    /** Python's {@code and}: evaluates the right operand only when the left one is true, and returns an operand. */
    static final AstBinary.Operator AND = new AstBinary.Operator() {
        @Override
        public Object eval(Bindings bindings, ELContext context, AstNode left, AstNode right) {
            Object value = left.eval(bindings, context);
            return PythonValues.truthy(value) ? right.eval(bindings, context) : value;
        }

        @Override
        public String toString() {
            return "and";
        }
    };

    /**
     * {@code +} as Python has it: strings with strings, lists with lists, numbers with numbers, anything else fails.
     * Jinjava would write {@code 'a' + none} as {@code anull} and {@code 'a' + 1} as {@code a1}, and append to or merge
     * what Python refuses; Jinja2 fails there, on an undefined value too ({@code '<|im_start|>' + message.content} when
     * the message has no content). Text marked {@code | safe} (a Markup in Jinja2) escapes the plain text added to it
     * (Functionary v3.1's {@code "Use the function '"|safe + name}).
     */
    static final AstBinary.Operator PLUS = new AstBinary.SimpleOperator() {
        @Override
        protected Object apply(TypeConverter converter, Object left, Object right) {
            if (left instanceof CharSequence && right instanceof CharSequence) {
                return left.toString() + right;
            }
            if ((left instanceof SafeString || right instanceof SafeString) && markupOperand(left)
                    && markupOperand(right)) {
                return new SafeString(escaped(left) + escaped(right));
            }
            if (left instanceof List && right instanceof List) {
                List<Object> joined = new ArrayList<>((List<?>) left);
                joined.addAll((List<?>) right);
                return new PyList(joined);
            }
            if (left instanceof Number && right instanceof Number) {
                return NumberOperations.add(converter, left, right);
            }
            throw new ELException("unsupported operand type(s) for +: '" + PythonValues.typeName(left) + "' and '"
                    + PythonValues.typeName(right) + "'");
        }

        @Override
        public String toString() {
            return "+";
        }
    };

    private static boolean markupOperand(Object value) {
        return value instanceof SafeString || value instanceof CharSequence;
    }

    /** markupsafe's {@code escape}: safe text as it is, plain text with {@code & < > ' "} as HTML entities. */
    private static String escaped(Object value) {
        if (value instanceof SafeString) {
            return ((SafeString) value).getValue();
        }
        return value.toString().replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#39;")
                .replace("\"", "&#34;");
    }

    /** {@code *}: {@code 'ab' * 2} and {@code [1] * 2} repeat, as in Python; numbers multiply as in JUEL. */
    static final AstBinary.Operator TIMES = new AstBinary.SimpleOperator() {
        @Override
        protected Object apply(TypeConverter converter, Object left, Object right) {
            if (left instanceof Number && (right instanceof CharSequence || right instanceof List)) {
                return apply(converter, right, left);
            }
            if ((left instanceof CharSequence || left instanceof List) && right instanceof Number) {
                long size = (left instanceof List ? ((List<?>) left).size() : ((CharSequence) left).length())
                        * Math.max(0, ((Number) right).longValue());
                if (size > Jinja2Environment.MAX_OUTPUT) {
                    throw new ELException("a repetition of " + size + " items is longer than any prompt");
                }
            }
            if (left instanceof CharSequence && right instanceof Number) {
                return left.toString().repeat(Math.max(0, ((Number) right).intValue()));
            }
            if (left instanceof List && right instanceof Number) {
                List<Object> repeated = new ArrayList<>();
                for (int i = 0; i < ((Number) right).intValue(); i++) {
                    repeated.addAll((List<?>) left);
                }
                return new PyList(repeated);
            }
            return NumberOperations.mul(converter, left, right);
        }

        @Override
        public String toString() {
            return "*";
        }
    };
}

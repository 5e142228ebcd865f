package dev.fulcrum.inference.engine.llama;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
import com.hubspot.jinjava.el.TruthyTypeConverter;
import com.hubspot.jinjava.interpret.Context;
import com.hubspot.jinjava.interpret.InterpreterFactory;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.tag.ForTag;
import com.hubspot.jinjava.tree.TagNode;
import com.hubspot.jinjava.tree.parse.TagToken;
import com.hubspot.jinjava.util.ForLoop;
import com.hubspot.jinjava.util.ObjectIterator;
import com.hubspot.jinjava.util.ObjectTruthValue;

import jinjava.de.odysseus.el.ExpressionFactoryImpl;
import jinjava.de.odysseus.el.tree.TreeStore;
import jinjava.de.odysseus.el.tree.impl.Cache;
import jinjava.javax.el.CompositeELResolver;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ExpressionFactory;

/**
 * A Jinjava set up as transformers sets up Jinja2 for chat templates ({@code ImmutableSandboxedEnvironment(
 * trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])} plus its globals), with Jinjava's departures from
 * Jinja2 that change a prompt's text turned off or corrected: Jinja2's grammar ({@link Jinja2Syntax}), Python's
 * {@code str} of printed values ({@code True}, not {@code true}), Python's string methods, no second rendering of
 * printed text that looks like a template (a message could otherwise inject template code), and Jinja2's loops.
 */
final class Jinja2Environment {

    private Jinja2Environment() {
    }

    static Jinjava create() {
        LegacyOverrides jinja2 = LegacyOverrides.newBuilder().withEvaluateMapKeys(true).withIterateOverMapKeys(true)
                .withUsePyishObjectMapper(true).withUseNaturalOperatorPrecedence(true)
                .withParseWhitespaceControlStrictly(true).withAllowAdjacentTextNodes(true)
                .withUseTrimmingForNotesAndExpressions(true).withKeepNullableLoopValues(true)
                .withHandleBackslashInQuotesOnly(true).build();
        CompositeELResolver resolver = new CompositeELResolver();
        resolver.add(new PythonStrings());
        resolver.add(new LoopNeighbours());
        resolver.add(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_ONLY);
        // trim_blocks, lstrip_blocks and the template's last newline are Jinja2's, applied by Jinja2Whitespace
        JinjavaConfig config = JinjavaConfig.newBuilder().withTrimBlocks(false).withLstripBlocks(false)
                .withKeepTrailingNewline(true).withNestedInterpretationEnabled(false).withLegacyOverrides(jinja2)
                .withElResolver(resolver).withInterperterFactory(new PythonPrintingInterpreters()).build();
        Jinjava jinjava = new Jinjava(config) {
            // Jinjava's own factory but for the grammar and the string conversion; JUEL's default cache size
            private final ExpressionFactory factory = new ExpressionFactoryImpl(
                    new TreeStore(Jinja2Syntax.treeBuilder(), new Cache(1000)), new PythonStringConversion());

            @Override
            public ExpressionFactory getExpressionFactory() {
                return factory;
            }
        };
        Context globals = jinjava.getGlobalContext();
        TemplateExtensions.register(globals);
        globals.registerTag(new Jinja2ForTag());
        return jinjava;
    }

    /** {@code loop.previtem} and {@code loop.nextitem} of the innermost loop; undefined at the ends. */
    private static final class LoopNeighbours extends ReadOnlyResolver {

        @Override
        public Object getValue(ELContext context, Object base, Object property) {
            if (!(base instanceof ForLoop) || !("previtem".equals(property) || "nextitem".equals(property))) {
                return null;
            }
            context.setPropertyResolved(true);
            List<Object> items = Jinja2ForTag.ITEMS.get().peekLast();
            int index = ((ForLoop) base).getIndex0() + ("previtem".equals(property) ? -1 : 1);
            return items != null && index >= 0 && index < items.size() ? items.get(index) : null;
        }
    }

    /** Interpreters that print a value as Python's {@code str} does, as Jinja2 prints it. */
    private static final class PythonPrintingInterpreters implements InterpreterFactory {

        @Override
        public JinjavaInterpreter newInstance(JinjavaInterpreter orig) {
            return new JinjavaInterpreter(orig) {
                @Override
                public String getAsString(Object object) {
                    return PythonValues.str(object);
                }
            };
        }

        @Override
        public JinjavaInterpreter newInstance(Jinjava application, Context context, JinjavaConfig renderConfig) {
            return new JinjavaInterpreter(application, context, renderConfig) {
                @Override
                public String getAsString(Object object) {
                    return PythonValues.str(object);
                }
            };
        }
    }

    /** {@code 'n=' ~ 1.0 ~ true} is {@code n=1.0True} in Jinja2. */
    private static final class PythonStringConversion extends TruthyTypeConverter {
        private static final long serialVersionUID = 1L;

        @Override
        protected String coerceToString(Object value) {
            if (value instanceof Boolean || value instanceof Double || value instanceof Float || value instanceof Map
                    || value instanceof List) {
                return PythonValues.str(value);
            }
            return super.coerceToString(value);
        }
    }

    /**
     * Jinja2's {@code for}: over the items {@code for x in xs if condition} keeps (so {@code loop.last} and
     * {@code loop.length} count those only; Jinjava would read {@code xs if condition} as a conditional expression),
     * over a string's characters, with {@code loop.previtem} and {@code loop.nextitem}.
     */
    private static final class Jinja2ForTag extends ForTag {
        private static final long serialVersionUID = 1L;

        /** The items of the loops being rendered on this thread, innermost last, for previtem and nextitem. */
        static final ThreadLocal<Deque<List<Object>>> ITEMS = ThreadLocal.withInitial(ArrayDeque::new);

        @Override
        public String interpretUnchecked(TagNode tagNode, JinjavaInterpreter interpreter) {
            var varsAndExpression = getLoopVarsAndExpression((TagToken) tagNode.getMaster());
            List<String> vars = varsAndExpression.getLeft();
            String expression = varsAndExpression.getRight();
            int condition = topLevelIf(expression);
            int line = tagNode.getLineNumber();
            Object collection = interpreter
                    .resolveELExpression(condition < 0 ? expression : expression.substring(0, condition), line);
            List<Object> items = new ArrayList<>();
            if (collection instanceof CharSequence) {
                collection.toString().chars().forEach(c -> items.add(String.valueOf((char) c)));
            } else {
                ObjectIterator.getLoop(collection).forEachRemaining(items::add);
            }
            if (condition >= 0) {
                String test = expression.substring(condition + " if ".length());
                try (var scope = interpreter.enterScope()) {
                    items.removeIf(item -> {
                        bind(vars, item, interpreter);
                        return !ObjectTruthValue.evaluate(interpreter.resolveELExpression(test, line));
                    });
                }
            }
            ITEMS.get().addLast(items);
            try {
                return renderForCollection(tagNode, interpreter, vars, items);
            } finally {
                ITEMS.get().removeLast();
            }
        }

        private static void bind(List<String> vars, Object item, JinjavaInterpreter interpreter) {
            if (vars.size() == 1) {
                interpreter.getContext().put(vars.get(0), item);
                return;
            }
            List<?> parts = item instanceof Map.Entry
                    ? List.of(((Map.Entry<?, ?>) item).getKey(), ((Map.Entry<?, ?>) item).getValue())
                    : item instanceof List ? (List<?>) item : List.of();
            for (int i = 0; i < vars.size(); i++) {
                interpreter.getContext().put(vars.get(i), i < parts.size() ? parts.get(i) : null);
            }
        }

        /**
         * Where {@code " if "} starts outside brackets and quotes, or -1: Jinja2 reads the iterable without conditional
         * expressions, so the first such {@code if} is the filter's.
         */
        static int topLevelIf(String expression) {
            int depth = 0;
            char quote = 0;
            for (int i = 0; i < expression.length(); i++) {
                char c = expression.charAt(i);
                if (quote != 0) {
                    if (c == '\\') {
                        i++;
                    } else if (c == quote) {
                        quote = 0;
                    }
                } else if (c == '\'' || c == '"') {
                    quote = c;
                } else if (c == '(' || c == '[' || c == '{') {
                    depth++;
                } else if (c == ')' || c == ']' || c == '}') {
                    depth--;
                } else if (depth == 0 && Character.isWhitespace(c) && expression.startsWith("if", i + 1)
                        && i + 3 < expression.length() && Character.isWhitespace(expression.charAt(i + 3))) {
                    return i;
                }
            }
            return -1;
        }
    }
}

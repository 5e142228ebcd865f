package dev.fulcrum.inference.engine.template;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.hubspot.jinjava.el.JinjavaObjectUnwrapper;
import com.hubspot.jinjava.interpret.Context;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.interpret.NullValue;
import com.hubspot.jinjava.lib.fn.MacroFunction;
import com.hubspot.jinjava.lib.tag.ForTag;
import com.hubspot.jinjava.lib.tag.IfTag;
import com.hubspot.jinjava.lib.tag.MacroTag;
import com.hubspot.jinjava.lib.tag.SetTag;
import com.hubspot.jinjava.lib.tag.Tag;
import com.hubspot.jinjava.tree.Node;
import com.hubspot.jinjava.tree.TagNode;
import com.hubspot.jinjava.tree.parse.TagToken;
import com.hubspot.jinjava.util.ForLoop;
import com.hubspot.jinjava.util.ObjectIterator;

import jinjava.javax.el.ELContext;

/**
 * Jinja2's {@code for}, {@code if}, {@code set} and {@code macro} where Jinjava's differ, and transformers'
 * {@code generation} block: {@code if} with Python's truth; loops filtered with {@code for x in xs if cond}, over a
 * string's characters, with {@code loop.previtem} and {@code loop.nextitem}; and a variable set to None (or a macro
 * argument that is None) hides a variable of the same name outside, as in Jinja2. Jinjava's scopes treat a null value
 * as absent and read the outer variable instead (Functionary's {@code get_array_typescript(None, ...)} saw its caller's
 * {@code param_name}), so None is stored as Jinjava's {@link NullValue} and read back as null.
 */
final class Jinja2Tags {

    private Jinja2Tags() {
    }

    static void register(Context globals) {
        globals.registerTag(new Jinja2ForTag());
        globals.registerTag(new Jinja2SetTag());
        globals.registerTag(new Jinja2MacroTag());
        globals.registerTag(new Jinja2IfTag());
        globals.registerTag(new GenerationTag());
        globals.registerTag(new FilterBlockTag());
    }

    /** Reads a stored None back as null. */
    static final class NoneUnwrapper extends JinjavaObjectUnwrapper {

        @Override
        public Object unwrapObject(Object o) {
            return o == NullValue.INSTANCE ? null : super.unwrapObject(o);
        }
    }

    /**
     * transformers' {@code {% generation %}...{% endgeneration %}}: it marks the assistant's text for
     * {@code return_assistant_tokens_mask}, and renders as its body, in a scope of its own (a call block in Jinja2).
     */
    private static final class GenerationTag implements Tag {
        private static final long serialVersionUID = 1L;

        @Override
        public String getName() {
            return "generation";
        }

        @Override
        public String interpret(TagNode tagNode, JinjavaInterpreter interpreter) {
            return body(tagNode, interpreter);
        }
    }

    /** A block tag's body rendered in a scope of its own. */
    private static String body(TagNode tagNode, JinjavaInterpreter interpreter) {
        StringBuilder body = new StringBuilder();
        try (var scope = interpreter.enterScope()) {
            for (Node child : tagNode.getChildren()) {
                body.append(child.render(interpreter).getValue());
            }
        }
        return body.toString();
    }

    /**
     * {@code {% filter trim %}...{% endfilter %}}: the body's text through the filters named (FireFunction v2's system
     * prompt), in a scope of its own.
     */
    private static final class FilterBlockTag implements Tag {
        private static final long serialVersionUID = 1L;
        /** The body's text, bound where only the filter expression reads it. */
        private static final String BODY = "filter_block_body";

        @Override
        public String getName() {
            return "filter";
        }

        @Override
        public String interpret(TagNode tagNode, JinjavaInterpreter interpreter) {
            String body = body(tagNode, interpreter);
            try (var scope = interpreter.enterScope()) {
                interpreter.getContext().put(BODY, body);
                return interpreter.getAsString(interpreter.resolveELExpression(BODY + " | " + tagNode.getHelpers(),
                        tagNode.getLineNumber(), tagNode.getStartPosition()));
            }
        }
    }

    /** {@code if} and {@code elif} with Python's truth ({@code "false"} is a true string). */
    private static final class Jinja2IfTag extends IfTag {
        private static final long serialVersionUID = 1L;

        @Override
        public boolean isPositiveIfElseNode(TagNode tagNode, JinjavaInterpreter interpreter) {
            return PythonValues.truthy(interpreter.resolveELExpression(tagNode.getHelpers(), tagNode.getLineNumber(),
                    tagNode.getStartPosition()));
        }
    }

    private static final class Jinja2SetTag extends SetTag {
        private static final long serialVersionUID = 1L;

        @Override
        public void executeSet(TagToken tagToken, JinjavaInterpreter interpreter, String[] varTokens,
                List<?> resolvedList, boolean allowDeferredValueOverride) {
            List<Object> values = new ArrayList<>();
            if (resolvedList == null || resolvedList.isEmpty()) {
                values.add(null);
            } else {
                values.addAll(resolvedList);
            }
            for (int i = 0; i < values.size() && i < varTokens.length; i++) {
                if (values.get(i) == null && !varTokens[i].contains(".")) {
                    values.set(i, NullValue.INSTANCE);
                }
            }
            super.executeSet(tagToken, interpreter, varTokens, values, allowDeferredValueOverride);
        }
    }

    private static final class Jinja2MacroTag extends MacroTag {
        private static final long serialVersionUID = 1L;

        @Override
        protected MacroFunction constructMacroFunction(TagNode tagNode, JinjavaInterpreter interpreter, String name,
                LinkedHashMap<String, Object> argNamesWithDefaults) {
            return new MacroFunction(tagNode.getChildren(), name, argNamesWithDefaults, false, interpreter.getContext(),
                    interpreter.getLineNumber(), interpreter.getPosition()) {
                @Override
                public String getEvaluationResult(Map<String, Object> argMap, Map<String, Object> kwargMap,
                        List<Object> varArgs, JinjavaInterpreter interpreter) {
                    Map<String, Object> args = new LinkedHashMap<>(argMap);
                    args.replaceAll((arg, value) -> value == null ? NullValue.INSTANCE : value);
                    return super.getEvaluationResult(args, kwargMap, varArgs, interpreter);
                }
            };
        }
    }

    /** {@code loop.previtem} and {@code loop.nextitem} of the innermost loop; undefined at the ends. */
    static final class LoopNeighbours extends ReadOnlyResolver {

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

    /**
     * Jinja2's {@code for}: over the items {@code for x in xs if condition} keeps (so {@code loop.last} and
     * {@code loop.length} count those only; Jinjava would read {@code xs if condition} as a conditional expression),
     * over a string's characters, with {@code loop.previtem} and {@code loop.nextitem}.
     */
    static final class Jinja2ForTag extends ForTag {
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
                        return !PythonValues.truthy(interpreter.resolveELExpression(test, line));
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

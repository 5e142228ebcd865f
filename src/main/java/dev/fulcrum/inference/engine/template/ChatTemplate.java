package dev.fulcrum.inference.engine.template;

import java.time.Clock;
import java.time.LocalDateTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.interpret.TemplateError.ErrorType;
import com.hubspot.jinjava.interpret.errorcategory.BasicTemplateErrorCategory;
import com.hubspot.jinjava.tree.ExpressionNode;
import com.hubspot.jinjava.tree.Node;
import com.hubspot.jinjava.tree.TagNode;
import com.hubspot.jinjava.tree.parse.ExpressionToken;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import jinjava.de.odysseus.el.tree.TreeBuilderException;

/**
 * A model's chat template (the Jinja2 source in a GGUF file's {@code tokenizer.chat_template}), rendered as Hugging
 * Face transformers' {@code apply_chat_template(..., tokenize=False)} renders it: the model was trained on that exact
 * text, so a space or a newline out of place costs quality. Jinjava stands in for Jinja2, configured and extended to
 * behave as transformers' sandboxed environment does: {@code trim_blocks} and {@code lstrip_blocks}, {@code break} and
 * {@code continue}, the globals {@code raise_exception} and {@code strftime_now}, {@code tojson} as Python's
 * {@code json.dumps}, Python's string methods, {@code filter} blocks, text marked {@code safe} escaping what is added
 * to it, a message's reasoning under transformers' names for it, and Jinja2's handling of the template's trailing
 * newline.
 * <p>
 * Immutable and safe to share between threads.
 */
public final class ChatTemplate {

    /** A template that called {@code raise_exception(message)}, or that could not render. */
    public static class TemplateException extends RuntimeException {
        public TemplateException(String message) {
            super(message);
        }
    }

    private static final Jinjava JINJAVA = Jinja2Environment.create();

    private final String source;
    private final String bosToken;
    private final String eosToken;
    private final Clock clock;

    private ChatTemplate(String source, String bosToken, String eosToken, Clock clock) {
        this.source = source;
        this.bosToken = bosToken;
        this.eosToken = eosToken;
        this.clock = clock;
    }

    /**
     * Prepares a template.
     *
     * @throws IllegalArgumentException
     *             when {@code source} is not a valid template (unbalanced or unknown tags, a broken expression)
     */
    public static ChatTemplate of(String source, String bosToken, String eosToken) {
        if (source == null || source.isBlank()) {
            throw new IllegalArgumentException("the chat template is empty");
        }
        String prepared = jinja2Source(source);
        JinjavaInterpreter interpreter = JINJAVA.newInterpreter();
        JinjavaInterpreter.pushCurrent(interpreter);
        try {
            Node root = interpreter.parse(prepared);
            for (TemplateError error : interpreter.getErrorsCopy()) {
                if (error.getSeverity() == ErrorType.FATAL) {
                    throw new IllegalArgumentException("invalid chat template: " + describe(error));
                }
            }
            checkExpressions(root);
        } finally {
            JinjavaInterpreter.popCurrent();
        }
        return new ChatTemplate(prepared, bosToken, eosToken, Clock.systemDefaultZone());
    }

    /** The same template, its {@code strftime_now} reading {@code clock} (the local time by default). */
    public ChatTemplate withClock(Clock clock) {
        return new ChatTemplate(source, bosToken, eosToken, clock);
    }

    /**
     * Parses the expressions printed and tested ({@code {{ }}}, {@code if}, {@code elif}): Jinja2 rejects a template
     * with a broken one when it compiles it, Jinjava only when it reaches it.
     */
    private static void checkExpressions(Node node) {
        String expression = node instanceof ExpressionNode ? ((ExpressionToken) node.getMaster()).getExpr()
                : node instanceof TagNode && List.of("if", "elif").contains(node.getName())
                        ? ((TagNode) node).getHelpers()
                        : null;
        if (expression != null) {
            try {
                Jinja2Syntax.treeBuilder().build("#{" + expression + "}");
            } catch (TreeBuilderException broken) {
                throw new IllegalArgumentException(
                        "invalid chat template: line " + node.getLineNumber() + ": " + broken.getMessage());
            }
        }
        node.getChildren().forEach(ChatTemplate::checkExpressions);
    }

    /**
     * The prompt for {@code messages} (OpenAI-style message objects) and {@code tools} ({@code null} when none).
     *
     * @throws TemplateException
     *             when the template raises an exception or fails
     */
    public String render(JsonArray messages, JsonArray tools, boolean addGenerationPrompt) {
        return render(messages, tools, addGenerationPrompt, Map.of());
    }

    /**
     * The prompt with the template's own further {@code variables} (FireFunction v2's {@code functions} and
     * {@code datetime}, as llama.cpp passes them): text as it is, a JSON value as its JSON text indented by two, as
     * llama.cpp writes it.
     */
    public String render(JsonArray messages, JsonArray tools, boolean addGenerationPrompt,
            Map<String, Object> variables) {
        Map<String, Object> bindings = new HashMap<>();
        variables.forEach((name, value) -> bindings.put(name,
                value instanceof JsonArray || value instanceof JsonObject
                        ? new PythonJson("  ", null, false, false).write(PythonValues.plain(value))
                        : value));
        bindings.put("messages", PythonValues.messages(messages));
        bindings.put("tools", tools == null ? null : PythonValues.plain(tools));
        bindings.put("add_generation_prompt", addGenerationPrompt);
        bindings.put("bos_token", bosToken);
        bindings.put("eos_token", eosToken);
        bindings.put(TemplateExtensions.NOW, LocalDateTime.now(clock));
        RenderResult result = JINJAVA.renderForResult(source, bindings);
        for (TemplateError error : result.getErrors()) {
            TemplateExtensions.Raised raised = TemplateExtensions.raised(error.getException());
            if (raised != null) {
                throw new TemplateException(raised.getMessage());
            }
        }
        for (TemplateError error : result.getErrors()) {
            // a macro past the recursion limit renders as nothing, which would be a wrong prompt
            if (error.getSeverity() == ErrorType.FATAL
                    || error.getCategory() == BasicTemplateErrorCategory.CYCLE_DETECTED) {
                throw new TemplateException("the chat template failed: " + describe(error));
            }
        }
        return result.getOutput();
    }

    private static String describe(TemplateError error) {
        return error.getMessage() + " (line " + error.getLineno() + ")";
    }

    /**
     * Jinja2's lexer turns every line ending into {@code \n} and drops one newline at the end of the template
     * ({@code keep_trailing_newline=False}); Jinjava would keep them, or drop a newline at the end of the output. Then
     * Jinja2's block whitespace rules.
     */
    private static String jinja2Source(String source) {
        String normalized = source.replace("\r\n", "\n").replace('\r', '\n');
        String kept = normalized.endsWith("\n") ? normalized.substring(0, normalized.length() - 1) : normalized;
        return Jinja2Whitespace.apply(kept);
    }
}

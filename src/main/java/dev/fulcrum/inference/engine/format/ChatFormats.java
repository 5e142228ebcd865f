package dev.fulcrum.inference.engine.format;

import java.util.List;
import java.util.function.Function;
import java.util.regex.Pattern;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.engine.ChatPrompt;
import dev.fulcrum.inference.engine.format.ChatFormat.Rendering;
import dev.fulcrum.inference.engine.format.ChatFormat.ThinkTags;

/**
 * Which family's format a chat template teaches, read from the markers in its source as llama.cpp reads them; a
 * template with none of them gets the generic format. Rendering a probe tells which of tools and past calls the
 * template shows itself; what it does not show is given to it as llama.cpp's minja gives it ({@link ToolPolyfill}).
 */
public final class ChatFormats {

    static final ThinkTags THINK = new ThinkTags("<think>", "</think>");
    private static final String PROBE_TOOL = "fulcrum_probe_tool";
    private static final String PROBE_CALL = "fulcrum_probe_call";

    private static final ChatFormat DEEPSEEK_R1 = NamedCallsFormat.of("DeepSeek R1", "<｜tool▁calls▁begin｜>",
            "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>function<｜tool▁sep｜>", "\n```json\n", "\n```<｜tool▁call▁end｜>",
            THINK);
    private static final ChatFormat DEEPSEEK_V3_1 = NamedCallsFormat.of("DeepSeek V3.1", "<｜tool▁calls▁begin｜>",
            "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>", THINK);
    private static final ChatFormat KIMI_K2 = new NamedCallsFormat("Kimi K2", "<|tool_calls_section_begin|>",
            "<|tool_calls_section_end|>", "<|tool_call_begin|>functions.",
            Pattern.compile(":(\\d+)\\s*<\\|tool_call_argument_begin\\|>"),
            "\":\" [0-9]+ \"<|tool_call_argument_begin|>\"", "<|tool_call_end|>", THINK, true);
    private static final ChatFormat FUNCTIONARY_V3_1 = NamedCallsFormat.of("Functionary v3.1 (Llama 3.1)", null, null,
            "<function=", ">", "</function>", null);
    private static final ChatFormat MISTRAL_NEMO = new MistralNemoFormat();
    private static final ChatFormat FIREFUNCTION_V2 = new FireFunctionV2Format();
    private static final ChatFormat GRANITE = new ArrayCallsFormat("Granite", "<|tool_call|>", null,
            JsonCalls.Keys.OPENAI, null, THINK, null);
    private static final ChatFormat COMMAND_R7B = new ArrayCallsFormat("Command R7B", "<|START_ACTION|>",
            "<|END_ACTION|>", new JsonCalls.Keys("tool_name", List.of("parameters"), "tool_call_id", true),
            new JsonObject().put("type", "string"), new ThinkTags("<|START_THINKING|>", "<|END_THINKING|>"),
            new ThinkTags("<|START_RESPONSE|>", "<|END_RESPONSE|>"));
    private static final ChatFormat LLAMA_3 = new Llama3Format();

    private ChatFormats() {
    }

    /**
     * The format of the template {@code source}; {@code render} renders messages and tools with it (and may throw when
     * the template refuses them).
     */
    public static ChatFormat detect(String source, Function<Rendering, String> render) {
        ChatFormat family = family(source);
        // what the family gives its template (FireFunction's tools are a variable of its own), rendered
        Function<ChatPrompt, String> own = prompt -> render
                .apply(family == null ? new Rendering(prompt.messages(), prompt.tools()) : family.render(prompt));
        boolean showsTools = shows(own, probeTools(), PROBE_TOOL);
        boolean showsCalls = shows(own, probeCalls(), PROBE_CALL);
        if (family == null) {
            return new GenericFormat(showsTools, showsCalls, thinks(source) ? THINK : null);
        }
        return showsTools && showsCalls ? family : new PolyfilledFormat(family, showsTools, showsCalls);
    }

    private static boolean thinks(String source) {
        return source.contains("<think>") || source.contains("</think>");
    }

    /** The family whose markers the template holds, or null. */
    private static ChatFormat family(String source) {
        if (source.contains("<|channel|>")) {
            return new GptOssFormat();
        }
        if (source.contains("<|START_ACTION|>")) {
            return COMMAND_R7B;
        }
        if (source.contains(">>>all")) {
            return new FunctionaryV32Format();
        }
        if (source.contains("<｜tool▁calls▁begin｜>")) {
            // R1 writes a call's arguments as a JSON code block, V3.1 bare
            return source.contains("```json") ? DEEPSEEK_R1 : DEEPSEEK_V3_1;
        }
        if (source.contains("<|tool_calls_section_begin|>")) {
            return KIMI_K2;
        }
        if (source.contains("<function=") && source.contains("<|start_header_id|>")) {
            return FUNCTIONARY_V3_1;
        }
        if (source.contains(" functools[")) {
            return FIREFUNCTION_V2;
        }
        if (source.contains("<|tool_call|>")) {
            return GRANITE;
        }
        if (source.contains("[TOOL_CALLS]")) {
            return MISTRAL_NEMO;
        }
        if (source.contains(HermesFormat.START)) {
            return new HermesFormat(thinks(source) ? "Qwen 3" : "Hermes 2 Pro / Qwen 2.5",
                    thinks(source) ? THINK : null);
        }
        if (source.contains("<|start_header_id|>ipython<|end_header_id|>") || source.contains("<|python_tag|>")) {
            return LLAMA_3;
        }
        return null;
    }

    /** Whether the template renders {@code name} from {@code probe}, rather than dropping it or refusing it. */
    private static boolean shows(Function<ChatPrompt, String> render, ChatPrompt probe, String name) {
        try {
            return render.apply(probe).contains(name);
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static ChatPrompt probeTools() {
        JsonArray tools = new JsonArray()
                .add(new JsonObject().put("type", "function").put("function", new JsonObject().put("name", PROBE_TOOL)
                        .put("description", "").put("parameters", new JsonObject().put("type", "object"))));
        return new ChatPrompt(new JsonArray().add(user()), tools, ChatPrompt.ToolMode.AUTO, null, "tools", false);
    }

    private static ChatPrompt probeCalls() {
        JsonObject call = new JsonObject().put("id", "call_1").put("type", "function").put("function",
                new JsonObject().put("name", PROBE_CALL).put("arguments", "{}"));
        JsonArray messages = new JsonArray().add(user())
                .add(new JsonObject().put("role", "assistant").put("content", "").put("tool_calls",
                        new JsonArray().add(call)))
                .add(new JsonObject().put("role", "tool").put("tool_call_id", "call_1").put("content", "ok"))
                .add(new JsonObject().put("role", "user").put("content", "Thanks"));
        return new ChatPrompt(messages, null, ChatPrompt.ToolMode.NONE, null, "tools", false);
    }

    private static JsonObject user() {
        return new JsonObject().put("role", "user").put("content", "Hello");
    }
}

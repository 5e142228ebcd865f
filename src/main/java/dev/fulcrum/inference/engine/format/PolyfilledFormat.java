package dev.fulcrum.inference.engine.format;

import java.util.List;

import io.vertx.core.json.JsonArray;

import dev.fulcrum.inference.engine.ChatPrompt;

/**
 * A family's format on a template that does not show the request's tools or past calls itself (DeepSeek R1's and V3.1's
 * official templates render no tools): they reach the model as {@link ToolPolyfill} writes them; everything else is the
 * family's.
 */
record PolyfilledFormat(ChatFormat family, boolean showsTools, boolean showsCalls) implements ChatFormat {

    @Override
    public String name() {
        return family.name();
    }

    @Override
    public Rendering render(ChatPrompt prompt) {
        Rendering own = family.render(prompt);
        ChatPrompt rewritten = new ChatPrompt(own.messages(), own.tools(), prompt.toolMode(), prompt.answerSchema(),
                prompt.schemaParam(), prompt.parallel());
        Rendering filled = ToolPolyfill.render(rewritten, showsTools, showsCalls);
        return new Rendering(filled.messages(), filled.tools(), own.variables());
    }

    @Override
    public Constraint calls(JsonArray tools, boolean forced, boolean parallel, Grammars grammars) {
        return family.calls(tools, forced, parallel, grammars);
    }

    @Override
    public Reply read(String text, Reading reading) {
        return family.read(text, reading);
    }

    @Override
    public List<String> printed() {
        return family.printed();
    }

    @Override
    public String callId(Call call) {
        return family.callId(call);
    }

    @Override
    public ThinkTags think() {
        return family.think();
    }
}

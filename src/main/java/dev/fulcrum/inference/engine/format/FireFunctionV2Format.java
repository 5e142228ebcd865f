package dev.fulcrum.inference.engine.format;

import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Map;

import dev.fulcrum.inference.engine.ChatPrompt;

/**
 * FireFunction v2: calls as {@code functools[{"name", "arguments"}]}; its template reads the tools from a variable of
 * its own, {@code functions} (their JSON text, empty without tools), and the day from {@code datetime}, which llama.cpp
 * passes it and transformers' callers must.
 */
final class FireFunctionV2Format extends ArrayCallsFormat {

    private static final DateTimeFormatter DAY = DateTimeFormatter.ofPattern("MMM dd yyyy HH:mm:ss 'GMT'",
            Locale.ENGLISH);

    FireFunctionV2Format() {
        super("FireFunction v2", " functools", null, JsonCalls.Keys.OPENAI, null, null, null);
    }

    @Override
    public Rendering render(ChatPrompt prompt) {
        Object functions = prompt.tools() == null ? "" : prompt.tools();
        return new Rendering(prompt.messages(), null,
                Map.of("functions", functions, "datetime", DAY.format(ZonedDateTime.now(ZoneOffset.UTC))));
    }

}

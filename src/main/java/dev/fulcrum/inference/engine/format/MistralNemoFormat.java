package dev.fulcrum.inference.engine.format;

import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import io.vertx.core.json.JsonObject;

/**
 * Mistral Nemo: {@code [TOOL_CALLS][{"name", "arguments", "id"}]}. Its template refuses a past call whose id is not
 * nine letters and digits, so the calls it answers get such ids (made here: the one the model writes comes after its
 * arguments, too late for a streamed call's first delta).
 */
final class MistralNemoFormat extends ArrayCallsFormat {

    private static final String ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    private static final int ID_LENGTH = 9;

    MistralNemoFormat() {
        super("Mistral Nemo", "[TOOL_CALLS]", null, new JsonCalls.Keys("name", List.of("arguments"), "id", false),
                new JsonObject().put("type", "string").put("minLength", ID_LENGTH).put("maxLength", ID_LENGTH), null,
                null);
    }

    @Override
    public String callId(Call call) {
        StringBuilder id = new StringBuilder();
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int i = 0; i < ID_LENGTH; i++) {
            id.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
        }
        return id.toString();
    }
}

package dev.fulcrum.tiny;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * Byte-level tokens: 0..255 are the UTF-8 bytes of the text, then one header token per role and the end-of-turn token.
 * A conversation is {@code <role> bytes <end>} per turn; a prompt ends with the assistant header.
 */
final class ChatTemplate {

    static final int SYSTEM = 256;
    static final int USER = 257;
    static final int ASSISTANT = 258;
    static final int TOOL = 259;
    static final int END = 260;
    static final int VOCAB = 261;

    private ChatTemplate() {
    }

    static int header(String role) {
        String name = role == null ? "" : role.toLowerCase(Locale.ROOT);
        return switch (name) {
            case "system", "developer" -> SYSTEM;
            case "assistant" -> ASSISTANT;
            case "tool", "function", "ipython" -> TOOL;
            default -> USER;
        };
    }

    static byte[] bytes(String content) {
        return content == null ? new byte[0] : content.getBytes(StandardCharsets.UTF_8);
    }
}

package dev.fulcrum.inference.hub;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A model's name on the Hub as Ollama and llama.cpp write it: {@code hf.co/{owner}/{repo}[:{quant}]} ({@code quant} a
 * tag such as {@code Q4_K_M}, matched in file names without regard to case; absent: llama.cpp's default choice).
 */
public record HubName(String repo, String tag) {

    private static final Pattern NAME = Pattern.compile(
            "(?:hf\\.co|huggingface\\.co)/([A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95})(?::([A-Za-z0-9][A-Za-z0-9._-]{0,63}))?");

    /** What a name must look like, for error messages. */
    public static final String FORM = "hf.co/{owner}/{repo} or hf.co/{owner}/{repo}:{quant}";

    /** The name, or null when {@code text} is not one. */
    public static HubName parse(String text) {
        Matcher m = text == null ? null : NAME.matcher(text.strip());
        if (m == null || !m.matches() || m.group(1).contains("..")) {
            return null;
        }
        return new HubName(m.group(1), m.group(2));
    }

    @Override
    public String toString() {
        return "hf.co/" + repo + (tag == null ? "" : ":" + tag);
    }
}

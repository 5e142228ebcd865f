package dev.fulcrum.tiny;

/**
 * Receives the generated text piece by piece as it is produced. Pieces hold whole code points only and never a stop
 * string or the beginning of one that later matched; their concatenation is the final text.
 */
@FunctionalInterface
public interface TextListener {

    /** @return false to cancel the generation, which then ends before the next token */
    boolean onText(String piece);
}

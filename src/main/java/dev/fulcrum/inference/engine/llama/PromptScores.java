package dev.fulcrum.inference.engine.llama;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The scores of a scored prompt's tokens ({@link Generation#scored}), read as its positions are decoded: token
 * {@code t}'s log probability (and its alternatives', and the asked target tokens') from the logits of position
 * {@code t - 1}. Only the tokens from {@link Generation#scoreFrom} on are read: the positions before them are decoded
 * without logits (llama.cpp computes the output layer only for the positions flagged), and their entries have no log
 * probability ({@code NaN}, no alternatives).
 */
final class PromptScores {

    private final Generation g;
    private final List<Generation.Token> tokens;
    private final float[][] targets;

    PromptScores(Generation g, LlamaModel model) {
        this.g = g;
        this.tokens = new ArrayList<>(g.prompt.length);
        this.targets = g.targets == null ? null : new float[g.prompt.length][];
        tokens.add(new Generation.Token(g.prompt[0], model.piece(g.prompt[0]), Float.NaN, new int[0], new float[0]));
    }

    /** Whether the logits of prompt position {@code position} are read (they score token {@code position + 1}). */
    boolean reads(int position) {
        return position + 1 >= g.scoreFrom && position + 1 < g.prompt.length;
    }

    /** The next token to score. */
    int next() {
        return tokens.size();
    }

    /** Scores the next token from its row of logits (null: a token before {@code scoreFrom}, not read). */
    void add(LlamaModel model, float[] logits) {
        int t = tokens.size();
        if (logits == null) {
            tokens.add(new Generation.Token(g.prompt[t], model.piece(g.prompt[t]), Float.NaN, null, null));
            return;
        }
        float norm = TokenLogprobs.norm(logits);
        tokens.add(TokenLogprobs.of(g.prompt[t], model.piece(g.prompt[t]), logits, g.topLogprobs, norm));
        if (targets != null && g.targets[t] != null) {
            float[] values = new float[g.targets[t].length];
            for (int j = 0; j < values.length; j++) {
                int id = g.targets[t][j];
                values[j] = id < 0 ? 0f : logits[id] - norm;
            }
            targets[t] = values;
        }
    }

    /** The scored prompt, once every token has its entry. */
    Generation.Prompt prompt() {
        return new Generation.Prompt(Collections.unmodifiableList(tokens), targets);
    }
}

/**
 * The built-in model: a tiny language model in plain Java, so a fresh install can answer chat completions offline and
 * the training API has something real to train. It is a model for offline use and tests, not a chat assistant:
 * untrained it produces random bytes, and trained it learns what it was shown (short question/answer pairs, a rewarded
 * habit).
 * <h2>Tokens and template</h2> 261 tokens: the 256 UTF-8 byte values, one header per role ({@code system} and
 * {@code developer}, {@code user} and unknown roles, {@code assistant}, {@code tool}) and end-of-turn. A conversation
 * is {@code <header> bytes <end>} per turn; a prompt ends with the assistant header. Prompts longer than the context
 * lose their oldest tokens.
 * <h2>Network</h2> A decoder-only transformer: learned token and position embeddings, 2 pre-norm blocks of width 80 (4
 * causal attention heads of 20, a GELU feed-forward layer of 320, layer norms), a final layer norm and an untied output
 * layer; context 256 tokens; 217,701 parameters in one float array ({@link dev.fulcrum.tiny.ModelShape} holds the
 * layout). {@code SequencePass} runs a whole sequence forward and backward (hand-written backpropagation, checked
 * against finite differences); {@code Decoder} generates token by token with a key/value cache. Sampling: temperature
 * (0 = greedy), top-p, token limit, stop strings, seed (java.util.Random, so the same seed, weights and conversation
 * give the same text on every JVM); role headers are never sampled.
 * <h2>Training</h2> {@link dev.fulcrum.tiny.BuiltinTrainer}: Adam with global gradient-norm clipping; SFT is next-token
 * cross-entropy on trainable turns, RL is a GRPO-style clipped-ratio policy gradient with group-relative advantages.
 * <h2>Weights format</h2> Magic {@code FULCRUMB}, int format version (1), six int hyperparameters (vocabulary, context,
 * width, layers, heads, feed-forward width), int parameter count, the parameters as big-endian IEEE 754 floats, and a
 * CRC-32 (as a long) of the float bytes: about 850 KiB.
 */
package dev.fulcrum.tiny;

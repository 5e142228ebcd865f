package dev.fulcrum.tiny;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32;

/**
 * The built-in language model: a small byte-level transformer whose weights live in one float array. Generation only
 * reads the weights, so one instance can serve many threads at once; training ({@link BuiltinTrainer}) changes them in
 * place, so train a {@link #copy()} while the original serves.
 */
public final class BuiltinModel {

    /** The file of a checkpoint that holds the weights ({@link #write}). */
    public static final String FILE = "model.bin";

    static final byte[] MAGIC = "FULCRUMB".getBytes(StandardCharsets.US_ASCII);
    static final int FORMAT_VERSION = 1;
    static final long INITIAL_SEED = 0x46756c6372756dL;

    final ModelShape shape;
    final float[] params;

    BuiltinModel(ModelShape shape, float[] params) {
        if (params.length != shape.size) {
            throw new IllegalArgumentException("parameter count does not match the shape");
        }
        this.shape = shape;
        this.params = params;
    }

    /** The untrained model: the same weights on every machine, drawn from a fixed seed. */
    public static BuiltinModel initial() {
        return initial(ModelShape.standard(), INITIAL_SEED);
    }

    static BuiltinModel initial(ModelShape shape, long seed) {
        Random random = new Random(seed);
        float[] p = new float[shape.size];
        int d = shape.width;
        fill(p, shape.tokenEmbedding, shape.vocab * d, 0.1, random);
        fill(p, shape.positionEmbedding, shape.context * d, 0.1, random);
        double residualScale = 1.0 / Math.sqrt(2.0 * shape.layers);
        for (int l = 0; l < shape.layers; l++) {
            Arrays.fill(p, shape.norm1Gain[l], shape.norm1Gain[l] + d, 1f);
            Arrays.fill(p, shape.norm2Gain[l], shape.norm2Gain[l] + d, 1f);
            fill(p, shape.query[l], d * d, 1.0 / Math.sqrt(d), random);
            fill(p, shape.key[l], d * d, 1.0 / Math.sqrt(d), random);
            fill(p, shape.value[l], d * d, 1.0 / Math.sqrt(d), random);
            fill(p, shape.attentionOut[l], d * d, residualScale / Math.sqrt(d), random);
            fill(p, shape.up[l], d * shape.hidden, 1.0 / Math.sqrt(d), random);
            fill(p, shape.down[l], shape.hidden * d, residualScale / Math.sqrt(shape.hidden), random);
        }
        Arrays.fill(p, shape.finalGain, shape.finalGain + d, 1f);
        fill(p, shape.head, d * shape.vocab, 0.02, random);
        return new BuiltinModel(shape, p);
    }

    private static void fill(float[] p, int offset, int count, double std, Random random) {
        for (int i = 0; i < count; i++) {
            p[offset + i] = (float) (random.nextGaussian() * std);
        }
    }

    /**
     * Reads a model written by {@link #write}: magic {@code FULCRUMB}, format version, the six hyperparameters
     * (vocabulary, context, width, layers, heads, hidden), the parameter count, the parameters as big-endian IEEE 754
     * floats and a CRC-32 of those float bytes. Anything else is rejected with an IOException.
     */
    public static BuiltinModel read(InputStream in) throws IOException {
        DataInputStream data = new DataInputStream(new BufferedInputStream(in));
        try {
            byte[] magic = new byte[MAGIC.length];
            data.readFully(magic);
            if (!Arrays.equals(magic, MAGIC)) {
                throw new IOException("not a built-in model file");
            }
            int version = data.readInt();
            if (version != FORMAT_VERSION) {
                throw new IOException("unsupported built-in model format version " + version);
            }
            ModelShape shape;
            try {
                shape = new ModelShape(data.readInt(), data.readInt(), data.readInt(), data.readInt(), data.readInt(),
                        data.readInt());
            } catch (IllegalArgumentException e) {
                throw new IOException("invalid built-in model hyperparameters: " + e.getMessage());
            }
            int count = data.readInt();
            if (count != shape.size) {
                throw new IOException("parameter count " + count + " does not match the hyperparameters");
            }
            float[] params = new float[count];
            CRC32 crc = new CRC32();
            byte[] chunk = new byte[1 << 16];
            int done = 0;
            while (done < count) {
                int n = Math.min(chunk.length / 4, count - done);
                data.readFully(chunk, 0, n * 4);
                crc.update(chunk, 0, n * 4);
                ByteBuffer.wrap(chunk, 0, n * 4).asFloatBuffer().get(params, done, n);
                done += n;
            }
            if (data.readLong() != crc.getValue()) {
                throw new IOException("built-in model checksum mismatch");
            }
            for (float v : params) {
                if (!Float.isFinite(v)) {
                    throw new IOException("built-in model holds a non-finite weight");
                }
            }
            return new BuiltinModel(shape, params);
        } catch (EOFException e) {
            throw new IOException("truncated built-in model file", e);
        }
    }

    public void write(OutputStream out) throws IOException {
        DataOutputStream data = new DataOutputStream(new BufferedOutputStream(out));
        data.write(MAGIC);
        data.writeInt(FORMAT_VERSION);
        data.writeInt(shape.vocab);
        data.writeInt(shape.context);
        data.writeInt(shape.width);
        data.writeInt(shape.layers);
        data.writeInt(shape.heads);
        data.writeInt(shape.hidden);
        data.writeInt(params.length);
        CRC32 crc = new CRC32();
        byte[] chunk = new byte[1 << 16];
        int done = 0;
        while (done < params.length) {
            int n = Math.min(chunk.length / 4, params.length - done);
            ByteBuffer.wrap(chunk, 0, n * 4).asFloatBuffer().put(params, done, n);
            crc.update(chunk, 0, n * 4);
            data.write(chunk, 0, n * 4);
            done += n;
        }
        data.writeLong(crc.getValue());
        data.flush();
    }

    /** An independent model with the same weights. */
    public BuiltinModel copy() {
        return new BuiltinModel(shape, params.clone());
    }

    public long parameterCount() {
        return params.length;
    }

    /** The most tokens the model sees at once: prompt and completion together. */
    public int contextLength() {
        return shape.context;
    }

    /**
     * The prompt tokens of a conversation: each turn as its role header, its UTF-8 bytes and the end-of-turn token,
     * then the assistant header. When longer than the context allows, the oldest tokens are dropped so that the prompt
     * leaves room for at least one generated token.
     */
    public int[] encodePrompt(List<ChatTurn> conversation) {
        int[] all = encodeTurns(conversation);
        int limit = shape.context - 1;
        return all.length <= limit ? all : Arrays.copyOfRange(all, all.length - limit, all.length);
    }

    static int[] encodeTurns(List<ChatTurn> conversation) {
        int total = 1;
        byte[][] contents = new byte[conversation.size()][];
        for (int i = 0; i < contents.length; i++) {
            contents[i] = ChatTemplate.bytes(conversation.get(i).content());
            total += contents[i].length + 2;
        }
        int[] tokens = new int[total];
        int at = 0;
        for (int i = 0; i < contents.length; i++) {
            tokens[at++] = ChatTemplate.header(conversation.get(i).role());
            for (byte b : contents[i]) {
                tokens[at++] = b & 0xFF;
            }
            tokens[at++] = ChatTemplate.END;
        }
        tokens[at] = ChatTemplate.ASSISTANT;
        return tokens;
    }

    /**
     * Generates the assistant's next turn. Streams text to the listener (may be null) as it is produced; when the
     * listener returns false the generation ends before the next token with {@link FinishReason#STOP}. When the context
     * fills up, the oldest half of it is dropped and generation continues.
     */
    public Generation generate(List<ChatTurn> conversation, Sampling sampling, TextListener listener) {
        return generate(conversation, sampling, listener, null);
    }

    /**
     * Generates as {@link #generate(List, Sampling, TextListener)} does, recording each generated token's
     * log-probability in {@code logprobs} (may be null) before its text reaches the listener.
     */
    public Generation generate(List<ChatTurn> conversation, Sampling sampling, TextListener listener,
            Logprobs logprobs) {
        return generate(encodePrompt(conversation), sampling, listener, logprobs);
    }

    /**
     * Continues {@code text} as raw bytes, without the chat template (a text completion): the prompt's UTF-8 bytes (its
     * last ones when longer than the context allows; the end-of-turn token for an empty prompt), then tokens as
     * {@link #generate(List, Sampling, TextListener, Logprobs)} generates them, until the limit, a stop string or the
     * end-of-turn token.
     */
    public Generation continueText(String text, Sampling sampling, TextListener listener, Logprobs logprobs) {
        byte[] bytes = ChatTemplate.bytes(text);
        int keep = Math.min(bytes.length, shape.context - 1);
        int[] prompt = new int[Math.max(1, keep)];
        if (keep == 0) {
            prompt[0] = ChatTemplate.END;
        }
        for (int i = 0; i < keep; i++) {
            prompt[i] = bytes[bytes.length - keep + i] & 0xFF;
        }
        return generate(prompt, sampling, listener, logprobs);
    }

    /**
     * Generates as {@link #generate(List, Sampling, TextListener, Logprobs)} does, from a prompt already encoded by
     * {@link #encodePrompt(List)} (a request with several choices encodes it once).
     */
    public Generation generate(int[] prompt, Sampling sampling, TextListener listener, Logprobs logprobs) {
        int limit = sampling.maxTokens() > 0 ? sampling.maxTokens() : shape.context;
        Random random = sampling.seed() != null ? new Random(sampling.seed()) : new Random();
        Decoder decoder = new Decoder(shape, params);
        int[] window = new int[shape.context];
        System.arraycopy(prompt, 0, window, 0, prompt.length);
        int filled = prompt.length;
        float[] logits = null;
        for (int i = 0; i < prompt.length; i++) {
            logits = decoder.step(prompt[i], i == prompt.length - 1);
        }
        StreamedText text = new StreamedText(sampling.stop(), listener);
        TokenSampler sampler = new TokenSampler(shape.vocab, sampling.temperature(), sampling.topP());
        int produced = 0;
        FinishReason reason = FinishReason.LENGTH;
        while (produced < limit) {
            int next = sampler.sample(logits, random);
            produced++;
            if (logprobs != null && next != ChatTemplate.END) {
                logprobs.record(logits, next);
            }
            if (next == ChatTemplate.END || !text.accept(next)) {
                reason = FinishReason.STOP;
                break;
            }
            if (produced == limit) {
                break;
            }
            if (filled == shape.context) {
                int keep = shape.context / 2;
                System.arraycopy(window, filled - keep, window, 0, keep);
                filled = keep;
                decoder.reset();
                for (int i = 0; i < filled; i++) {
                    decoder.step(window[i], false);
                }
            }
            window[filled++] = next;
            logits = decoder.step(next, true);
        }
        String answer = text.finish();
        if (logprobs != null && text.stopMatched()) {
            logprobs.keepBytes(answer.getBytes(StandardCharsets.UTF_8).length);
        }
        return new Generation(answer, prompt.length, produced, reason);
    }
}

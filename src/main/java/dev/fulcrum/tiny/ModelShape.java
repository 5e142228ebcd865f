package dev.fulcrum.tiny;

/**
 * Hyperparameters of the transformer and where each weight lives in the single flat parameter array. Matrices are
 * stored row-major as [in][out], so {@code y = x W}.
 */
final class ModelShape {

    static final int MAX_DIMENSION = 4096;

    final int vocab;
    final int context;
    final int width;
    final int layers;
    final int heads;
    final int hidden;

    final int tokenEmbedding;
    final int positionEmbedding;
    final int[] norm1Gain;
    final int[] norm1Bias;
    final int[] query;
    final int[] key;
    final int[] value;
    final int[] attentionOut;
    final int[] norm2Gain;
    final int[] norm2Bias;
    final int[] up;
    final int[] upBias;
    final int[] down;
    final int[] downBias;
    final int finalGain;
    final int finalBias;
    final int head;
    final int headBias;
    final int size;

    ModelShape(int vocab, int context, int width, int layers, int heads, int hidden) {
        if (vocab != ChatTemplate.VOCAB) {
            throw new IllegalArgumentException("vocabulary size must be " + ChatTemplate.VOCAB);
        }
        check(context, "context");
        check(width, "width");
        check(layers, "layers");
        check(heads, "heads");
        check(hidden, "hidden");
        if (width % heads != 0) {
            throw new IllegalArgumentException("width must be a multiple of heads");
        }
        this.vocab = vocab;
        this.context = context;
        this.width = width;
        this.layers = layers;
        this.heads = heads;
        this.hidden = hidden;
        long at = 0;
        tokenEmbedding = (int) at;
        at += (long) vocab * width;
        positionEmbedding = (int) at;
        at += (long) context * width;
        norm1Gain = new int[layers];
        norm1Bias = new int[layers];
        query = new int[layers];
        key = new int[layers];
        value = new int[layers];
        attentionOut = new int[layers];
        norm2Gain = new int[layers];
        norm2Bias = new int[layers];
        up = new int[layers];
        upBias = new int[layers];
        down = new int[layers];
        downBias = new int[layers];
        for (int l = 0; l < layers; l++) {
            norm1Gain[l] = (int) at;
            at += width;
            norm1Bias[l] = (int) at;
            at += width;
            query[l] = (int) at;
            at += (long) width * width;
            key[l] = (int) at;
            at += (long) width * width;
            value[l] = (int) at;
            at += (long) width * width;
            attentionOut[l] = (int) at;
            at += (long) width * width;
            norm2Gain[l] = (int) at;
            at += width;
            norm2Bias[l] = (int) at;
            at += width;
            up[l] = (int) at;
            at += (long) width * hidden;
            upBias[l] = (int) at;
            at += hidden;
            down[l] = (int) at;
            at += (long) hidden * width;
            downBias[l] = (int) at;
            at += width;
            if (at > Integer.MAX_VALUE - 16) {
                throw new IllegalArgumentException("model too large");
            }
        }
        finalGain = (int) at;
        at += width;
        finalBias = (int) at;
        at += width;
        head = (int) at;
        at += (long) width * vocab;
        headBias = (int) at;
        at += vocab;
        if (at > 64L * 1024 * 1024) {
            throw new IllegalArgumentException("model too large");
        }
        size = (int) at;
    }

    /** The shape of the built-in model. */
    static ModelShape standard() {
        return new ModelShape(ChatTemplate.VOCAB, 256, 80, 2, 4, 320);
    }

    int headSize() {
        return width / heads;
    }

    private static void check(int value, String name) {
        if (value < 1 || value > MAX_DIMENSION) {
            throw new IllegalArgumentException(name + " out of range");
        }
    }
}

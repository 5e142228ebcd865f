package dev.fulcrum.inference;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The end-of-generation tokens' texts of a GGUF file, read from its header (the bindings expose neither the ids nor why
 * a generation stopped): with llama.cpp printing special tokens, an answer that ends in one of them ended by the
 * model's choice ({@code stop}), any other by its token limit.
 */
final class GgufTokens {

    private static final int MAGIC = 0x46554747; // "GGUF", little-endian
    private static final long MAX_STRING = 1 << 20;
    /**
     * Texts llama.cpp also treats as end of generation when the vocabulary has them (its llama-vocab.cpp), besides the
     * file's eos and eot ids.
     */
    private static final Set<String> KNOWN_ENDS = Set.of("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",
            "<|endoftext|>", "<EOT>", "_<EOT>", "<｜end▁of▁sentence｜>", "</s>", "<|end_of_text|>", "<|return|>",
            "<|call|>", "<|eom_id|>");

    private GgufTokens() {
    }

    /**
     * The texts of {@code tokenizer.ggml.eos_token_id} and {@code .eot_token_id}, and of the vocabulary's tokens that
     * llama.cpp knows as ends by their text; empty when the file has none.
     */
    static Set<String> endTokens(Path file) throws IOException {
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file), 1 << 16))) {
            if (Integer.reverseBytes(in.readInt()) != MAGIC) {
                throw new IOException("not a GGUF file");
            }
            int version = u32(in);
            if (version < 2) {
                throw new IOException("GGUF version " + version + " is not supported");
            }
            u64(in); // tensor count
            long kvs = u64(in);
            List<String> tokens = null;
            List<Long> ends = new ArrayList<>();
            for (long i = 0; i < kvs; i++) {
                String key = string(in);
                int type = u32(in);
                if (key.equals("tokenizer.ggml.tokens") && type == 9) {
                    int itemType = u32(in);
                    long count = u64(in);
                    if (itemType != 8 || count > Integer.MAX_VALUE) {
                        throw new IOException("tokenizer.ggml.tokens is no array of strings");
                    }
                    tokens = new ArrayList<>((int) count);
                    for (long t = 0; t < count; t++) {
                        tokens.add(string(in));
                    }
                } else if ((key.equals("tokenizer.ggml.eos_token_id") || key.equals("tokenizer.ggml.eot_token_id"))
                        && (type == 4 || type == 5)) {
                    ends.add(u32(in) & 0xffffffffL);
                } else {
                    skip(in, type);
                }
            }
            Set<String> texts = new LinkedHashSet<>();
            if (tokens != null) {
                for (String token : tokens) {
                    if (KNOWN_ENDS.contains(token)) {
                        texts.add(token);
                    }
                }
            }
            for (long id : ends) {
                if (tokens != null && id < tokens.size() && !tokens.get((int) id).isEmpty()) {
                    texts.add(tokens.get((int) id));
                }
            }
            return texts;
        }
    }

    /**
     * The architectures whose {@code <arch>.pooling_type} llama.cpp (build b4916) reads: its encoder models. For other
     * architectures it ignores the key (checked: a Llama file declaring mean pooling still gives one vector per token).
     */
    private static final Set<String> POOLED_ARCHITECTURES = Set.of("bert", "nomic-bert", "jina-bert-v2");

    /**
     * Whether llama.cpp pools the file's embeddings as the file declares ({@code <arch>.pooling_type}, not "none", on
     * an architecture whose loader reads it); otherwise it would give one vector per token.
     */
    static boolean declaresPooling(Path file) throws IOException {
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file), 1 << 16))) {
            if (Integer.reverseBytes(in.readInt()) != MAGIC) {
                throw new IOException("not a GGUF file");
            }
            u32(in); // version, checked by endTokens
            u64(in); // tensor count
            long kvs = u64(in);
            String architecture = null;
            boolean pooled = false;
            for (long i = 0; i < kvs; i++) {
                String key = string(in);
                int type = u32(in);
                if (key.equals("general.architecture") && type == 8) {
                    architecture = string(in);
                } else if (key.endsWith(".pooling_type") && (type == 4 || type == 5)) {
                    pooled = u32(in) != 0; // 0 is llama.cpp's "none"
                } else {
                    skip(in, type);
                }
            }
            return pooled && POOLED_ARCHITECTURES.contains(architecture);
        }
    }

    private static void skip(DataInputStream in, int type) throws IOException {
        switch (type) {
            case 0, 1, 7 -> skipBytes(in, 1);
            case 2, 3 -> skipBytes(in, 2);
            case 4, 5, 6 -> skipBytes(in, 4);
            case 10, 11, 12 -> skipBytes(in, 8);
            case 8 -> skipBytes(in, u64(in));
            case 9 -> {
                int itemType = u32(in);
                long count = u64(in);
                for (long i = 0; i < count; i++) {
                    skip(in, itemType);
                }
            }
            default -> throw new IOException("unknown GGUF value type " + type);
        }
    }

    private static void skipBytes(InputStream in, long n) throws IOException {
        long left = n;
        while (left > 0) {
            long skipped = in.skip(left);
            if (skipped <= 0) {
                if (in.read() < 0) {
                    throw new EOFException();
                }
                skipped = 1;
            }
            left -= skipped;
        }
    }

    private static String string(DataInputStream in) throws IOException {
        long length = u64(in);
        if (length < 0 || length > MAX_STRING) {
            throw new IOException("GGUF string too long");
        }
        byte[] bytes = new byte[(int) length];
        in.readFully(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static int u32(DataInputStream in) throws IOException {
        return Integer.reverseBytes(in.readInt());
    }

    private static long u64(DataInputStream in) throws IOException {
        return Long.reverseBytes(in.readLong());
    }
}

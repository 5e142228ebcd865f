package dev.fulcrum.inference.engine.llama;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import com.sun.jna.Pointer;

/**
 * One GGUF file loaded by llama.cpp ({@code llama_model}): its weights (memory-mapped), vocabulary and metadata, shared
 * by every context on it, whatever LoRA adapter the context applies. Tokenizing and the pieces of tokens are read-only
 * uses of the vocabulary and safe from any thread; freeing is the engine's, once no context is left.
 */
public final class LlamaModel {

    private final String path;
    private final long fileSize;
    private Pointer model;
    private final Pointer vocab;
    private final int vocabSize;
    private final boolean addBos;
    private final boolean[] endOfGeneration;
    /** Each token's text as llama.cpp prints it without special tokens (a control token is empty), read once. */
    private final byte[][] pieces;
    private final String chatTemplate;
    private final int embeddingLength;

    private LlamaModel(String path, long fileSize, Pointer model) {
        this.path = path;
        this.fileSize = fileSize;
        this.model = model;
        this.vocab = LlamaApi.llama_model_get_vocab(model);
        this.vocabSize = LlamaApi.llama_vocab_n_tokens(vocab);
        this.addBos = LlamaApi.llama_vocab_get_add_bos(vocab) != 0;
        this.endOfGeneration = new boolean[vocabSize];
        for (int token = 0; token < vocabSize; token++) {
            endOfGeneration[token] = LlamaApi.llama_vocab_is_eog(vocab, token) != 0;
        }
        this.pieces = new byte[vocabSize][];
        this.chatTemplate = LlamaNatives.string(LlamaApi.llama_model_chat_template(model, null));
        this.embeddingLength = LlamaApi.llama_model_n_embd(model);
    }

    /** Loads the file on the CPU (memory-mapped); throws {@link IllegalStateException} when llama.cpp cannot. */
    static LlamaModel load(String path, long fileSize) {
        LlamaNatives.require();
        LlamaApi.ModelParams params = LlamaApi.llama_model_default_params();
        params.n_gpu_layers = 0;
        Pointer model = LlamaApi.llama_model_load_from_file(path, params);
        if (model == null) {
            throw new IllegalStateException("llama.cpp could not load " + path + " (see the log for its reason)");
        }
        return new LlamaModel(path, fileSize, model);
    }

    String path() {
        return path;
    }

    long fileSize() {
        return fileSize;
    }

    Pointer pointer() {
        return model;
    }

    Pointer vocab() {
        return vocab;
    }

    public int vocabSize() {
        return vocabSize;
    }

    public int embeddingLength() {
        return embeddingLength;
    }

    /** The file's {@code tokenizer.chat_template}, or null. */
    public String chatTemplate() {
        return chatTemplate;
    }

    /** A metadata value as text ({@code llama_model_meta_val_str}), or null when the file has no such key. */
    public String meta(String key) {
        byte[] buffer = new byte[256];
        int length = LlamaApi.llama_model_meta_val_str(model, key, buffer, buffer.length);
        if (length >= buffer.length) {
            buffer = new byte[length + 1];
            length = LlamaApi.llama_model_meta_val_str(model, key, buffer, buffer.length);
        }
        return length < 0 ? null : new String(buffer, 0, length, StandardCharsets.UTF_8);
    }

    /** The text of a token as the vocabulary stores it (special tokens as written, e.g. {@code <|im_end|>}). */
    public String tokenText(int token) {
        return LlamaNatives.string(LlamaApi.llama_vocab_get_text(vocab, token));
    }

    public int bos() {
        return LlamaApi.llama_vocab_bos(vocab);
    }

    public int eos() {
        return LlamaApi.llama_vocab_eos(vocab);
    }

    /** Whether the vocabulary starts every tokenized text with its start token (as llama.cpp and llama-server do). */
    public boolean addsBos() {
        return addBos;
    }

    public boolean isEndOfGeneration(int token) {
        return token >= 0 && token < vocabSize && endOfGeneration[token];
    }

    /**
     * Tokenizes {@code text}: {@code addSpecial} adds the start token when the vocabulary asks for it, and
     * {@code parseSpecial} reads special tokens written in the text as such (llama-server does both for prompts).
     */
    public int[] tokenize(String text, boolean addSpecial, boolean parseSpecial) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        int[] tokens = new int[bytes.length + 2];
        int count = LlamaApi.llama_tokenize(vocab, bytes, bytes.length, tokens, tokens.length, addSpecial,
                parseSpecial);
        if (count < 0) {
            tokens = new int[-count];
            count = LlamaApi.llama_tokenize(vocab, bytes, bytes.length, tokens, tokens.length, addSpecial,
                    parseSpecial);
        }
        if (count < 0) {
            throw new IllegalStateException("llama.cpp could not tokenize the text");
        }
        return Arrays.copyOf(tokens, count);
    }

    /** A token's text with control tokens written out ({@code <|im_end|>}), as a scorer lists them. */
    public byte[] specialPiece(int token) {
        return token < 0 || token >= vocabSize ? new byte[0] : render(token, true);
    }

    /** The bytes a token prints (no special tokens: control tokens print nothing); may be part of a character. */
    public byte[] piece(int token) {
        if (token < 0 || token >= vocabSize) {
            return new byte[0];
        }
        byte[] piece = pieces[token];
        if (piece == null) {
            piece = render(token, false);
            pieces[token] = piece;
        }
        return piece;
    }

    private byte[] render(int token, boolean special) {
        byte[] buffer = new byte[64];
        int length = LlamaApi.llama_token_to_piece(vocab, token, buffer, buffer.length, 0, special);
        if (length < 0) {
            buffer = new byte[-length];
            length = LlamaApi.llama_token_to_piece(vocab, token, buffer, buffer.length, 0, special);
        }
        return Arrays.copyOf(buffer, Math.max(0, length));
    }

    /** Frees the weights; called by the engine once no context or adapter is left on the model. */
    void free() {
        if (model != null) {
            LlamaApi.llama_model_free(model);
            model = null;
        }
    }
}

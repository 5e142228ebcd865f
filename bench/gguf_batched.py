"""llama.cpp's own batched decoding, the reference for Fulcrum's "4 requests at once against one": the same GGUF file,
threads, context and batch, through llama-cpp-python's bindings of llama.cpp's C API (its high-level Llama decodes one
sequence at a time). N sequences, each with its own prompt, are decoded together in one llama_batch per step, greedy
(argmax of the logits), the end tokens never chosen, for exactly MAX_TOKENS tokens each; the figure is generated tokens
per second over the whole run (prompts included), as bench/gguf_bench.py measures Fulcrum's."""

from __future__ import annotations

import time

import llama_cpp
import numpy as np


@llama_cpp.llama_log_callback
def _quiet(level, text, data):
    """llama.cpp's log, dropped: its load and context messages would bury the benchmark's lines."""


def batched_rate(gguf: str, threads: int, context: int, batch: int, prompts: list[str], max_tokens: int) -> float:
    """Generated tokens per second of len(prompts) sequences decoded together, greedy, max_tokens each."""
    llama_cpp.llama_log_set(_quiet, None)
    llama_cpp.llama_backend_init()
    model_params = llama_cpp.llama_model_default_params()
    model = llama_cpp.llama_model_load_from_file(gguf.encode(), model_params)
    vocab = llama_cpp.llama_model_get_vocab(model)
    n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
    eog = np.array([llama_cpp.llama_vocab_is_eog(vocab, t) for t in range(n_vocab)])
    params = llama_cpp.llama_context_default_params()
    params.n_ctx = context
    params.n_batch = batch
    params.n_ubatch = batch
    params.n_seq_max = len(prompts)
    params.n_threads = threads
    params.n_threads_batch = threads
    params.kv_unified = True  # one cache for every sequence, as llama.cpp b4916 (Fulcrum's) has it
    ctx = llama_cpp.llama_init_from_model(model, params)
    tokens = [_tokenize(vocab, p) for p in prompts]
    native = llama_cpp.llama_batch_init(max(batch, len(prompts)), 0, len(prompts))
    try:
        start = time.perf_counter()
        last = []
        for seq, prompt in enumerate(tokens):  # each prompt in batches of at most `batch` tokens
            for at in range(0, len(prompt), batch):
                part = prompt[at : at + batch]
                _fill(native, [(t, at + i, seq, at + i == len(prompt) - 1) for i, t in enumerate(part)])
                _decode(ctx, native)
            last.append(_argmax(ctx, native.n_tokens - 1, n_vocab, eog))
        positions = [len(p) for p in tokens]
        generated = len(prompts)
        for _ in range(max_tokens - 1):
            _fill(native, [(last[s], positions[s], s, True) for s in range(len(prompts))])
            _decode(ctx, native)
            last = [_argmax(ctx, s, n_vocab, eog) for s in range(len(prompts))]
            positions = [p + 1 for p in positions]
            generated += len(prompts)
        return generated / (time.perf_counter() - start)
    finally:
        llama_cpp.llama_batch_free(native)
        llama_cpp.llama_free(ctx)
        llama_cpp.llama_model_free(model)


def _tokenize(vocab, text: str) -> list[int]:
    data = text.encode()
    out = (llama_cpp.llama_token * (len(data) + 8))()
    n = llama_cpp.llama_tokenize(vocab, data, len(data), out, len(out), True, True)
    return list(out[:n])


def _fill(native, entries) -> None:
    for i, (token, pos, seq, logits) in enumerate(entries):
        native.token[i] = token
        native.pos[i] = pos
        native.n_seq_id[i] = 1
        native.seq_id[i][0] = seq
        native.logits[i] = logits
    native.n_tokens = len(entries)


def _decode(ctx, native) -> None:
    status = llama_cpp.llama_decode(ctx, native)
    if status != 0:
        raise RuntimeError(f"llama_decode answered {status}")


def _argmax(ctx, index: int, n_vocab: int, eog) -> int:
    logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx, index), shape=(n_vocab,)).copy()
    logits[eog] = -np.inf
    return int(np.argmax(logits))


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("gguf")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--context-size", type=int, default=4096)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--sequences", type=int, default=4)
    args = parser.parse_args()
    prompts = [f"Story {k}: Once upon a time" for k in range(args.sequences)]
    one = batched_rate(args.gguf, args.threads, args.context_size, args.batch, prompts[:1], args.max_tokens)
    many = batched_rate(args.gguf, args.threads, args.context_size, args.batch, prompts, args.max_tokens)
    print(f"1 sequence: {one:.1f} tokens/s; {args.sequences} at once: {many:.1f} tokens/s ({many / one:.2f}x)")

"""A GGUF file as base model (`--model-path x.gguf`): converted once to the Hugging Face directory the worker trains.

transformers reads a GGUF (`from_pretrained(..., gguf_file=...)`, dequantizing it), but a model loaded so refuses
`save_pretrained` (it counts as quantized); a fresh model of the same config, given the dequantized weights, saves.

The cache (`--gguf-cache`, `$FULCRUM_WORKER_GGUF_CACHE`, else `$XDG_CACHE_HOME/fulcrum-worker/gguf` or
`~/.cache/fulcrum-worker/gguf`) holds one directory per GGUF content, named by the file's sha256, so a copy or a move
of the file converts nothing again. The hash is remembered under `digests/` per path, size, mtime and inode, so a
restart reads no more than the file's metadata. A conversion runs under an exclusive lock (`<sha256>.lock`, flock),
into `<sha256>.partial-*`, and is renamed to `<sha256>` when complete: a second worker waits for the first and reuses
its result, and a crash leaves only a partial directory, which the next conversion removes. A directory counts as
converted only with its manifest, a config naming the model's type and its weights.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import gc
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

CACHE_ENV = "FULCRUM_WORKER_GGUF_CACHE"
MANIFEST = "fulcrum-gguf.json"
# Bumped when the conversion writes something else: directories of another format are converted again.
FORMAT = 1

log = logging.getLogger("fulcrum_worker")


def is_gguf_file(model_path: str | Path) -> bool:
    return Path(model_path).suffix.lower() == ".gguf"


def cache_root(option: str | Path | None = None) -> Path:
    """The cache: the option, else `$FULCRUM_WORKER_GGUF_CACHE`, else the user's cache directory."""
    if option:
        return Path(option)
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "fulcrum-worker" / "gguf"


def hf_directory(gguf_file: str | Path, cache: str | Path | None = None) -> Path:
    """The Hugging Face directory of a GGUF file: from the cache, or converted into it first."""
    gguf_file = Path(gguf_file).resolve()
    with open(gguf_file, "rb") as handle:
        if handle.read(4) != b"GGUF":
            raise ValueError(f"{gguf_file} is not a GGUF file")
    root = cache_root(cache)
    root.mkdir(parents=True, exist_ok=True)
    digest = _digest(gguf_file, root)
    target = root / digest
    if not _complete(target):
        with _locked(root / f"{digest}.lock"):
            if not _complete(target):  # else another process converted it while this one waited
                _convert_into(gguf_file, digest, target)
    log.info("GGUF base %s: Hugging Face weights in %s (%s)", gguf_file, target, _size(target))
    return target


def convert(gguf_file: Path, out: Path) -> None:
    """Writes the model (float32 safetensors, the dequantized weights), its config and tokenizer to `out`."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with tempfile.TemporaryDirectory(prefix="fulcrum-gguf-source-") as source:
        # The file alone in a directory: beside Hugging Face files, transformers would read their tokenizer instead.
        Path(source, "model.gguf").symlink_to(gguf_file)
        tokenizer = AutoTokenizer.from_pretrained(source, gguf_file="model.gguf")
        loaded = AutoModelForCausalLM.from_pretrained(source, gguf_file="model.gguf", dtype=torch.float32)
    config = loaded.config
    del config.quantization_config  # the dequantized weights are plain float32
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict(), strict=True, assign=True)
    model.tie_weights()
    model.generation_config = loaded.generation_config
    del loaded
    # save_pretrained writes no weights on a rank other than 0 of an initialized process group; under torchrun the
    # conversion runs on whichever rank took the lock first, and its directory serves every rank
    model.should_save_on_this_rank = lambda is_main_process: is_main_process
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    del model
    gc.collect()


def _convert_into(gguf_file: Path, digest: str, target: Path) -> None:
    root = target.parent
    for leftover in root.glob(f"{digest}.partial-*"):  # a crashed conversion's (the lock is ours)
        log.info("removing %s, left by an interrupted conversion", leftover)
        shutil.rmtree(leftover, ignore_errors=True)
    if target.exists():  # of another format
        shutil.rmtree(target)
    log.info("GGUF base %s: converting to Hugging Face weights (once; cached in %s)", gguf_file, root)
    started = time.perf_counter()
    partial = Path(tempfile.mkdtemp(prefix=f"{digest}.partial-", dir=root))
    try:
        convert(gguf_file, partial)
        if not _written(partial):
            raise RuntimeError(f"converting {gguf_file} wrote no model (config.json with a model_type, *.safetensors)")
        manifest = {
            "format": FORMAT,
            "sha256": digest,
            "source": str(gguf_file),
            "size": gguf_file.stat().st_size,
            "conversion_seconds": round(time.perf_counter() - started, 1),
            "versions": _versions(),
        }
        (partial / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        os.rename(partial, target)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    log.info("GGUF base %s: converted in %.1f s", gguf_file, time.perf_counter() - started)


def _complete(directory: Path) -> bool:
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return manifest.get("format") == FORMAT and _written(directory)


def _written(directory: Path) -> bool:
    """Whether the directory holds a model: a config naming its type and weights (an older worker could leave a
    directory without them, converting on a rank other than 0)."""
    try:
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(config.get("model_type")) and any(directory.glob("*.safetensors"))


def _digest(gguf_file: Path, root: Path) -> str:
    """The file's sha256; remembered per path, size, mtime and inode, so an unchanged file is hashed once."""
    stat = gguf_file.stat()
    identity = {"path": str(gguf_file), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "inode": stat.st_ino}
    memo = root / "digests" / (hashlib.sha256(str(gguf_file).encode()).hexdigest() + ".json")
    with contextlib.suppress(OSError, ValueError):
        known = json.loads(memo.read_text(encoding="utf-8"))
        if {k: known.get(k) for k in identity} == identity:
            return known["sha256"]
    started = time.perf_counter()
    sha = hashlib.sha256()
    with open(gguf_file, "rb") as handle:
        while chunk := handle.read(1 << 24):
            sha.update(chunk)
    digest = sha.hexdigest()
    log.info("GGUF base %s: sha256 %s (%.1f s)", gguf_file, digest, time.perf_counter() - started)
    memo.parent.mkdir(exist_ok=True)
    handle, written = tempfile.mkstemp(prefix=f"{memo.name}.", dir=memo.parent)
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        file.write(json.dumps({**identity, "sha256": digest}) + "\n")
    os.replace(written, memo)
    return digest


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            log.info("waiting for another process converting the same GGUF (%s)", path)
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _size(directory: Path) -> str:
    size = sum(f.stat().st_size for f in directory.iterdir() if f.is_file())
    return f"{size / 1e6:.1f} MB"


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("transformers", "gguf", "torch")}

"""Saves a GGUF file's tokenizer as a Hugging Face tokenizer directory, what lm-eval's local-completions model tokenizes
with (no Hub here). Run in the training worker's environment (transformers reads the GGUF with gguf and torch).

Usage: tokenizer_from_gguf.py GGUF OUT
"""

import pathlib
import sys

from transformers import AutoTokenizer

gguf = pathlib.Path(sys.argv[1])
AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(sys.argv[2])

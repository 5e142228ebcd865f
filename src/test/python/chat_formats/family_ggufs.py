"""Writes a copy of a GGUF file for each chat template given: the same weights and vocabulary, the template replaced.

ChatFormatFamiliesTest (dev.fulcrum.inference.engine.llama) loads each copy of the suite's tiny model as a model of
that family would be loaded: the format is detected from the template the file holds.

    python family_ggufs.py MODEL.gguf OUT_DIR TEMPLATE.jinja...    (writes OUT_DIR/<template's name>.gguf)
"""

import argparse
from pathlib import Path

import gguf
from gguf.scripts.gguf_new_metadata import MetadataDetails, copy_with_new_metadata, get_field_data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("templates", type=Path, nargs="+")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for template in args.templates:
        target = args.out / (template.stem + ".gguf")
        reader = gguf.GGUFReader(args.model, "r")
        writer = gguf.GGUFWriter(target, arch=get_field_data(reader, gguf.Keys.General.ARCHITECTURE))
        alignment = get_field_data(reader, gguf.Keys.General.ALIGNMENT)
        if alignment is not None:
            writer.data_alignment = alignment
        source = template.read_bytes().decode("utf-8")  # as written: line endings too
        new = {gguf.Keys.Tokenizer.CHAT_TEMPLATE: MetadataDetails(gguf.GGUFValueType.STRING, source)}
        copy_with_new_metadata(reader, writer, new, [])


if __name__ == "__main__":
    main()

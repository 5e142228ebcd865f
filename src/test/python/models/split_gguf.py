"""Splits a GGUF file into parts as llama.cpp's gguf-split does: `<prefix>-0000i-of-0000N.gguf`, each part a GGUF of
its own with `split.no`, `split.count` and `split.tensors.count`, the first holding every other key, the tensors
shared out in order. With the `gguf` package of llama.cpp (its GGUFWriter splits when given split_max_tensors).

Usage: python split_gguf.py MODEL.gguf OUT_DIR PREFIX PARTS
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import gguf


def split(model: Path, out_dir: Path, prefix: str, parts: int) -> list[Path]:
    reader = gguf.GGUFReader(model)
    arch = reader.fields[gguf.Keys.General.ARCHITECTURE].contents()
    per_part = math.ceil(len(reader.tensors) / parts)
    out_dir.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(out_dir / f"{prefix}.gguf", arch, split_max_tensors=per_part)
    for field in reader.fields.values():
        # the architecture and the GGUF header's own fields are the writer's
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue
        value_type = field.types[0]
        sub_type = field.types[-1] if value_type == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), value_type, sub_type=sub_type)
    for tensor in reader.tensors:
        writer.add_tensor_info(
            tensor.name, tensor.data.shape, tensor.data.dtype, tensor.data.nbytes, tensor.tensor_type
        )
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for tensor in reader.tensors:
        writer.write_tensor_data(tensor.data, tensor_endianess=reader.endianess)
    writer.close()
    return sorted(out_dir.glob(f"{prefix}-*-of-*.gguf"))


if __name__ == "__main__":
    written = split(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
    for path in written:
        print(path)

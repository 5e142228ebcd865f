"""A multipart/form-data body of plain fields and one file part named ``file``, for the benchmarks' uploads."""

from __future__ import annotations

import uuid


def encode(
    fields: dict, filename: str, content: bytes, content_type: str = "application/octet-stream"
) -> tuple[bytes, str]:
    """The body and its Content-Type header (with the boundary)."""
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
        f"Content-Type: {content_type}\r\n\r\n".encode()
        + content
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"

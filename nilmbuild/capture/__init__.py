"""Capture: the fixed example batch -> records -> compact msgpack blobs (docs/format.md), and the Python reader."""

from .capture import capture_batch
from .format import FORMAT, VERSION, CaptureReader, decode, encode
from .records import Capture, CaptureRecord
from .sizes import record_group, size_report

__all__ = [
    "Capture",
    "CaptureRecord",
    "CaptureReader",
    "FORMAT",
    "VERSION",
    "capture_batch",
    "decode",
    "encode",
    "record_group",
    "size_report",
]

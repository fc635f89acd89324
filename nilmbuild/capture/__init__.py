"""Capture: the fixed example batch -> records -> compact msgpack blobs (docs/format.md), and the Python reader."""

from .capture import Capture, CaptureRecord, capture_batch, record_group, size_report
from .format import FORMAT, VERSION, CaptureReader, decode, encode

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

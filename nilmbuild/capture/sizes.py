"""Bytes per record and per group of a capture's blob (`nilmbuild inspect`, the bench)."""

from __future__ import annotations

from . import format as fmt


def record_group(name: str) -> str:
    p = name.split(".")
    if p[0] == "ablation":
        return ".".join(p[:2])
    if p[0] == "weights":
        return "weights"
    if p[0] == "encoder":
        if len(p) > 3 and p[2] in ("attn", "ffn"):
            return ".".join(p[:3])
        return ".".join(p[:2])
    if p[0] == "heads":
        return "heads"
    if p[0] == "transpose_out":
        return "heads"
    if p[0] in ("input", "instance_norm", "pos_encoding", "projection", "transpose_in") or p[0].startswith("embed"):
        return "embed"
    return p[0]


def size_report(capture_or_blob, samples=(0,)) -> dict:
    """Bytes per record and per group of the blob for `samples` (default: one example sample).

    Returns {"samples", "blob_bytes", "data_bytes", "groups": {group: bytes}, "records": {name: {...}}}.
    """
    blob = (
        capture_or_blob
        if isinstance(capture_or_blob, (bytes, bytearray))
        else fmt.encode(capture_or_blob, samples=list(samples) if samples is not None else None)
    )
    reader = fmt.decode(bytes(blob))
    groups: dict[str, int] = {}
    records = {}
    for n in reader.names():
        rec = reader.record(n)
        nb = reader.nbytes(n)
        g = record_group(n)
        groups[g] = groups.get(g, 0) + nb
        records[n] = {
            "group": g,
            "bytes": nb,
            "encoding": rec["encoding"],
            "shape": rec["shape"],
            "axes": rec["axes"],
            "err": rec.get("err"),
            "stats": rec["stats"],
            "stage": rec["stage"],
            "op": rec.get("op"),
        }
    return {
        "samples": reader.meta.get("samples"),
        "blob_bytes": len(blob),
        "data_bytes": sum(groups.values()),
        "groups": groups,
        "records": records,
    }

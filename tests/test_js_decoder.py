"""Python writes a blob, the JS decoder (static/js/decode.js, under node's test runner) reads it.

Run as a script to write the fixture: python tests/test_js_decoder.py OUTDIR
(OUTDIR/capture.msgpack plus OUTDIR/expected/*.f32 = the Python reader's values, and rows.json).
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))


def write_fixture(out: Path) -> None:
    from test_format import special_capture, tiny_capture

    from nilmbuild.capture import decode, encode

    out.mkdir(parents=True, exist_ok=True)
    _, _, cap, _ = tiny_capture()
    blobs = {"capture": encode(cap, samples=[0, 2]), "special": encode(special_capture())}
    manifest = {}
    for key, blob in blobs.items():
        (out / f"{key}.msgpack").write_bytes(blob)
        r = decode(blob)
        (out / key).mkdir(exist_ok=True)
        for i, n in enumerate(r.names()):
            r.get(n).astype("<f4").tofile(out / key / f"{i}.f32")
        manifest[key] = {"names": r.names()}
    r = decode(blobs["capture"])
    rows = []
    for n in [n for n in r.names() if n.endswith(("attn.weights", "attn.scores", "attn.masked_scores"))]:
        for b, h, q in ((0, 0, 0), (1, 7, 63), (1, 3, 17)):
            if r.meta["samples"][b] in r.rows(n):  # b: the blob's sample (a partial record may not hold it)
                rows.append({"name": n, "b": b, "h": h, "q": q, "row": r.slice(n, b)[h, q].astype(float).tolist()})
    manifest["rows"] = rows
    # records of a run on some samples only (the unmasked ablation): the blob's samples they hold
    manifest["partial"] = {n: r.rows(n) for n in r.names() if "samples" in r.record(n)}
    (out / "manifest.json").write_text(json.dumps(manifest))


def test_js_decoder_matches_python_reader(tmp_path):
    if shutil.which("node") is None:
        pytest.skip("missing dependency: node: install Node.js 20+ (`make setup` installs it)")
    if not (ROOT / "node_modules" / "@msgpack" / "msgpack" / "package.json").is_file():
        pytest.skip("missing dependency: node_modules/@msgpack/msgpack: run `npm ci` (or `make setup`)")
    write_fixture(tmp_path)
    env = dict(os.environ, NB_CAPTURE_FIXTURE=str(tmp_path))
    res = subprocess.run(
        ["node", "--test", str(ROOT / "tests" / "js")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]


def test_js_reader_knows_the_records_each_op_reads():
    """decode.js's OP_FIELDS (which records a derived op reads: what a partial record narrows) is the format's
    OP_REFS."""
    import re

    from nilmbuild.capture.format import OP_REFS

    js = (ROOT / "static" / "js" / "decode.js").read_text()
    body = js[js.index("var OP_FIELDS = {") : js.index("};", js.index("var OP_FIELDS = {"))]
    fields = {op: tuple(re.findall(r'"(\w+)"', refs)) for op, refs in re.findall(r"(\w+): \[([^\]]*)\]", body)}
    assert fields == OP_REFS


if __name__ == "__main__":
    write_fixture(Path(sys.argv[1]))

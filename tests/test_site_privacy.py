"""Nothing private in published pages: a site built from a CSV in a local folder, with a checkpoint whose
provenance names local paths, shows folder/file names + content hashes, never the absolute paths."""

import re

import numpy as np

from nilmbuild.site.privacy import content_hash, public_path, scrub, source_label


def _house(folder, days=6):
    folder.mkdir(parents=True)
    t = np.datetime64("2024-03-01 00:00:00") + np.arange(days * 1440) * np.timedelta64(60, "s")
    i = np.arange(t.size)
    kettle = np.where(i % 301 < 4, 2200.0, 0.0)
    fridge = np.where(i % 50 < 20, 90.0, 0.0)
    agg = 150 + kettle + fridge
    rows = [
        f"{str(ts).replace('T', ' ')};{a:.1f};{k:.0f};{f:.0f}".replace(".", ",")
        for ts, a, k, f in zip(t, agg, kettle, fridge)
    ]
    (folder / "house65_2024-03.csv").write_text("Time;Aggregate;Kettle;Fridge\n" + "\n".join(rows) + "\n")
    return folder


def test_source_label_and_scrub(tmp_path):
    h = _house(tmp_path / "data" / "house65", days=1)
    digest = content_hash(h)
    assert re.fullmatch(r"[0-9a-f]{12}", digest)
    assert source_label(f"csv:{h}") == f"csv:house65 (sha256 {digest})"
    assert source_label(f"csv:{h}/house65_2024-03.csv").startswith("csv:house65_2024-03.csv (sha256 ")
    assert source_label("synthetic") == "synthetic"
    assert source_label("csv:/nonexistent/house9") == "csv:house9"
    assert (
        public_path("nilmbuild train -s csv:/home/me/data/house65 --out /home/me/runs/m.pt")
        == "nilmbuild train -s csv:house65 --out m.pt"
    )
    for keep in (
        "https://example.org/a/b",
        "q/k",
        "1/sqrt(d)",
        "csv:../shared/data/ukdale",
        "2024/01/02",
        "FFN 96 -> 384 -> 96",
    ):
        assert public_path(keep) == keep
    assert scrub({"a": [f"csv:{h}", 1, None], "b": {"c": str(h)}}, {f"csv:{h}": "csv:H"}) == {
        "a": ["csv:H", 1, None],
        "b": {"c": "house65"},
    }


def _page_text(html: str) -> str:
    """The page plus its decoded (inflated) blobs (msgpack keeps strings as UTF-8 bytes)."""
    from nilmbuild.site.assets import read_blobs

    return html + "".join(b.decode("latin-1") for b in read_blobs(html).values())


def test_no_page_contains_the_absolute_paths_of_its_inputs(tmp_path):
    from nilmbuild.model.checkpoint import load_checkpoint, save_checkpoint
    from nilmbuild.site.context import make_context
    from nilmbuild.site.pages import build_all

    house = _house(tmp_path / "private" / "house65")
    spec = f"csv:{house}"
    base = load_checkpoint(None)
    ckpt = tmp_path / "private" / "runs" / "mine.pt"
    ckpt.parent.mkdir()
    prov = {
        **base.provenance,
        "source": spec,
        "dataset": "csv",
        "command": f"nilmbuild train --source {spec} --out {ckpt}",
    }
    extra = {**base.extra, "train_config": {**(base.extra.get("train_config") or {}), "source": spec, "out": str(ckpt)}}
    save_checkpoint(ckpt, base.model, scalers=base.scalers, train_log=base.train_log, provenance=prov, extra=extra)

    ctx = make_context(str(ckpt), spec, batch=2)
    out = tmp_path / "site"
    build_all(ctx, out, build_only=["index", "data", "training"])
    label = f"csv:house65 (sha256 {content_hash(house)})"
    texts = {p.name: _page_text(p.read_text(encoding="utf-8")) for p in sorted(out.glob("*.html"))}
    assert set(texts) == {"index.html", "data.html", "training.html"}
    private = str(tmp_path)
    for name, text in texts.items():
        assert private not in text, (name, text[text.index(private) - 80 : text.index(private) + 80])
        assert "/private/" not in text, name
    assert label in texts["index.html"] and "mine.pt (sha256 " in texts["index.html"]

"""The benchmark code runs (its numbers are reported by `make bench`, never asserted as speeds here)."""

from nilmbuild.bench.__main__ import print_table
from nilmbuild.bench.site import size_rows
from nilmbuild.bench.timing import median_time


def test_size_rows_on_the_real_site(site_context, built_site, capsys):
    from nilmbuild.live.runtime import RUNTIME_FILE
    from nilmbuild.site.views.live_parts import MODEL_FILE

    rows = size_rows(site_context, built_site)
    pages = {r["name"] for r in rows if r["group"] == "bytes per page"}
    assert {"index.html", "attention.html", "playground.html", "total site (pages + shared files)"} <= pages
    by = {r["name"]: r["bytes"] for r in rows}
    shared = {r["name"] for r in rows if r["group"].startswith("shared sibling files")}
    assert shared == {RUNTIME_FILE, MODEL_FILE}  # the live model's, counted once, not as pages
    html = sum(f.stat().st_size for f in built_site.glob("*.html"))
    assert by["total pages (the page budget)"] == html < by["total site (pages + shared files)"]
    assert by["playground.html"] < by[MODEL_FILE] / 10  # the Playground loads the graph, carries none
    (att,) = [r for r in rows if r.get("ratio")]
    assert att["ratio"] > 10  # q + k + lse vs the float16 attention weights: the point of the derived encoding
    print_table(rows)
    assert "attention store" in capsys.readouterr().out


def test_median_time_calls_the_function():
    calls = []
    assert median_time(lambda: calls.append(1), repeats=3, warmup=1) >= 0
    assert len(calls) == 4


def test_train_step_bench_reports_four_steps_against_the_previous_ones():
    from nilmbuild.bench.train_infer import bench_train_step

    rows = bench_train_step(batch=2, repeats=1)
    assert [r["vs_reference"] for r in rows[:1]] == [1.0] and len(rows) >= 4
    assert all(r["windows_per_s"] > 0 and r["seconds"] > 0 for r in rows)


def test_build_figures_are_printed_beside_the_baseline_as_ratios():
    from nilmbuild.bench.build_runs import compare_rows

    rows = compare_rows(
        {"build_s": 9.0, "peak_rss_mb": 1200.0, "site_mb": 17.3},
        {"machine": {"cores": 2}, "figures": {"build_s": 36.0, "peak_rss_mb": 4800.0}},
    )
    by = {r["name"]: r for r in rows}
    assert by["build_s"]["baseline"] == 36.0 and by["build_s"]["ratio"] == 0.25
    assert by["peak_rss_mb"]["ratio"] == 0.25
    assert by["site_mb"]["baseline"] is None and by["site_mb"]["ratio"] is None  # not in the baseline
    assert [r["ratio"] for r in compare_rows({"build_s": 9.0}, None)] == [None]


def test_explain_bench_times_every_method_against_a_forward_backward():
    from nilmbuild.bench.explain import bench_explain
    from nilmbuild.explain import METHODS

    rows = bench_explain(repeats=1)
    assert [r["name"] for r in rows] == ["forward + backward (reference)"] + [f"explain --method {m}" for m in METHODS]
    assert all(r["s"] > 0 for r in rows) and rows[0]["x_ref"] == 1.0
    assert rows[1]["x_ref"] > rows[3]["x_ref"]  # IG (56 gradient passes) costs more than saliency (one)


def test_upstream_build_figures_are_printed_beside_the_default_sites():
    from nilmbuild.bench.upstream import build_rows, default_build

    site_rows = [{"name": "build_s", "now": 8.0}, {"name": "peak_rss_mb", "now": 1000.0}]
    default, source = default_build(site_rows)
    assert (default, source) == ({"build_s": 8.0, "peak_rss_mb": 1000.0}, "this run")
    rows = build_rows({"build_s": 6.0, "peak_rss_mb": 1500.0, "site_mb": 9.0}, default, source)
    by = {r["name"]: r for r in rows}
    assert by["build_s"]["default_site"] == 8.0 and by["build_s"]["ratio"] == 0.75
    assert by["peak_rss_mb"]["ratio"] == 1.5
    assert by["site_mb"]["default_site"] is None and by["site_mb"]["ratio"] is None
    assert default_build(None)[1] == "bench/baseline.json"  # no "site" section in this run: the baseline's


def test_upstream_bench_imports_the_condinilm_fixture(tmp_path):
    import nilmbuild
    from nilmbuild.bench.upstream import FIXTURE, import_fixture

    out = import_fixture(tmp_path)
    model = nilmbuild.load_model(out)
    assert model.architecture == "condinilm"
    assert model.devices == ["kettle", "fridge", "washing_machine"]  # the fixture config's `app`
    assert FIXTURE.is_dir() and out.parent == tmp_path

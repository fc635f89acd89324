"""`python -m nilmbuild.bench` (make bench): print one table, write bench/results.json.

Every speed is reported as a ratio against a reference measured in the same run on the same machine,
because absolute times on shared machines are noise. Options: --quick (fewer repeats, no torch.compile),
--skip model,train,infer,explain,disaggregate,site,build,pages,upstream,animation,live. The "disaggregate" section
(bench/disaggregate_memory.py) gives `nilmbuild disaggregate`'s peak RSS at 1x and 4x the series length. The
"site" section runs `nilmbuild site` cold and from the capture cache in fresh processes, and the "pages" section (bench/pages.py; builds a site when "build" is
skipped) times every page in Chromium; both print each figure beside bench/baseline.json's as a ratio
(--write-baseline records a new baseline, stamped with the machine). The "upstream" section (bench/upstream.py)
imports a committed CondiNILM fixture checkpoint, builds its site cold and times its pages, beside the default
site's figures. Pages alone, on a built site: `python -m nilmbuild.bench.pages --site site`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import torch

from nilmbuild.bench.table import print_table


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m nilmbuild.bench", description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip", default="", help="comma-separated sections to skip")
    ap.add_argument("--out", default="bench/results.json")
    ap.add_argument(
        "--write-baseline",
        action="store_true",
        help="also record this run's build and page figures and the machine in bench/baseline.json",
    )
    a = ap.parse_args(argv)
    skip = set(filter(None, a.skip.split(",")))
    reps = 2 if a.quick else 5
    torch.set_num_threads(os.cpu_count() or 1)
    rows, t0 = [], time.perf_counter()

    def env() -> dict:
        return {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "cpus": os.cpu_count(),
            "threads": torch.get_num_threads(),
            "machine": platform.machine(),
            "device": ("cuda:" + torch.cuda.get_device_name(0)) if torch.cuda.is_available() else "cpu",
            "wall_s": time.perf_counter() - t0,
        }

    def section(name, fn):
        """Run one section, print its rows at once and save everything so far (a later failure loses nothing)."""
        if name in skip:
            return None
        print(f"[bench] {name} ...", file=sys.stderr, flush=True)
        res = fn()
        new = res if isinstance(res, list) else res[0] + res[1]
        rows.extend(new)
        print_table(new)
        save()
        return res

    def save():
        out = Path(a.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"env": env(), "rows": rows}, indent=1, default=float))

    from nilmbuild.bench.model import bench_model
    from nilmbuild.bench.train_infer import bench_seq2subseq, bench_train_step

    section("model", lambda: bench_model(repeats=reps, with_compile=not a.quick))
    section("train", lambda: bench_train_step(repeats=max(2, reps // 2)))
    section("infer", lambda: bench_seq2subseq(repeats=max(1, reps // 2)))
    from nilmbuild.bench.explain import bench_explain

    section("explain", lambda: bench_explain(repeats=max(1, reps // 2)))
    from nilmbuild.bench.disaggregate_memory import bench_disaggregate_memory

    section("disaggregate", lambda: bench_disaggregate_memory(days=10 if a.quick else 30))
    from nilmbuild.bench.build_runs import bench_build_runs
    from nilmbuild.bench.pages import bench_pages
    from nilmbuild.bench.site import bench_build
    from nilmbuild.bench.upstream import bench_upstream

    site_rows = section("site", lambda: bench_build_runs(repeats=1 if a.quick else 2, write_baseline=a.write_baseline))

    built = section("build", bench_build)
    site_dir = built[2] if built is not None else None
    section("pages", lambda: bench_pages(site_dir, repeats=3 if a.quick else 5, write=a.write_baseline))
    section("upstream", lambda: bench_upstream(3 if a.quick else 5, site_rows=site_rows, default_site=site_dir))
    if built is not None:
        from nilmbuild.bench.forward_anim import bench_forward_anim

        section("animation", lambda: bench_forward_anim(built[2], ms=1500 if a.quick else 3000))
        from nilmbuild.bench.live import bench_live

        section("live", lambda: bench_live(built[2], repeats=3 if a.quick else 7))
    print("\n=== all results ===")
    print_table(rows)
    print(f"\n{json.dumps(env())}")
    save()
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

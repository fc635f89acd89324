"""`nilmbuild` ends with a hard exit (cli.run): exit codes, flushed output and started jobs must survive it."""

import subprocess
import sys
import textwrap


def _run(*args, code=None):
    cmd = [sys.executable, "-m", "nilmbuild", *args] if code is None else [sys.executable, "-c", code]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_help_is_flushed_and_exits_0():
    r = _run("--help")
    assert r.returncode == 0
    assert r.stdout.startswith("Usage: nilmbuild") and "Quick start" in r.stdout


def test_user_error_is_one_line_and_exits_2():
    r = _run("site", "--source", "nosuch.csv", "--out", "unused-out-dir")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1].startswith("error: unknown data source 'nosuch.csv'")
    assert "Traceback" not in r.stderr


def test_hard_exit_waits_for_started_jobs_and_keeps_sys_exit_codes(tmp_path):
    out = tmp_path / "written-by-the-job"
    code = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from nilmbuild.cli import _hard_exit
        from nilmbuild.threads import start_once
        start_once({{}}, "k", "slow-job", lambda: (time.sleep(0.5), Path({str(out)!r}).write_text("done")))
        print("before exit", end="")   # no newline: only an explicit flush gets it out
        _hard_exit("a message")
    """)
    r = _run(code=code)
    assert out.read_text() == "done"  # the job finished before the process ended
    assert r.stdout == "before exit"
    assert r.returncode == 1 and r.stderr.strip() == "a message"  # sys.exit("a message") semantics

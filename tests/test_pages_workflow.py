"""GitHub Pages on GitHub's runners: the workflow parses, everything it runs exists, it installs the CPU-only
torch wheel, runs the browser-free tests and builds with the README's command; `make site` needs no browser."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / ".github" / "workflows" / "pages.yml"
KNOWN_ACTIONS = {
    "actions/checkout",
    "actions/setup-python",
    "actions/setup-node",
    "actions/configure-pages",
    "actions/upload-pages-artifact",
    "actions/deploy-pages",
}


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def _steps(wf):
    return [s for job in wf["jobs"].values() for s in job.get("steps", [])]


def _make_targets() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return {m.group(1) for m in re.finditer(r"^([A-Za-z][\w.-]*)\s*:(?!=)", text, re.MULTILINE)}


def _commands(wf):
    for s in _steps(wf):
        for line in (s.get("run") or "").splitlines():
            if line.strip() and not line.strip().startswith("#"):
                yield line.strip()


def test_workflow_shape(workflow):
    assert workflow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    build, deploy = workflow["jobs"]["build"], workflow["jobs"]["deploy"]
    assert deploy["needs"] == "build" and deploy["environment"]["name"] == "github-pages"
    uses = [s["uses"].split("@")[0] for s in _steps(workflow) if "uses" in s]
    assert set(uses) <= KNOWN_ACTIONS and "actions/upload-pages-artifact" in uses and "actions/deploy-pages" in uses
    assert all(re.fullmatch(r"[\w/-]+@v\d+", s["uses"]) for s in _steps(workflow) if "uses" in s)
    py = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/setup-python"))
    node = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/setup-node"))
    assert py["with"]["cache"] == "pip" and node["with"]["cache"] == "npm"
    upload = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"].rstrip("/") == "site"


def test_every_command_exists_and_the_order_is_deps_tests_site(workflow):
    cmds = list(_commands(workflow))
    targets = _make_targets()
    made = []
    for c in cmds:
        words = c.split()
        assert words[0] == "make", f"only make targets run in the workflow: {c}"
        goals = [w for w in words[1:] if "=" not in w and not w.startswith("-")]
        assert goals and set(goals) <= targets, f"{c}: no such make target ({sorted(targets)})"
        variables = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        for v in variables:
            assert re.search(rf"^{v}\s*\?=", (REPO / "Makefile").read_text(), re.MULTILINE), v
        made += goals
    assert made == ["site-deps", "test-fast", "site"]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "make site " in readme  # the README's build command is what deploys


def test_cpu_torch_from_pytorch_index(workflow):
    cmd = next(c for c in _commands(workflow) if "TORCH_INDEX=" in c)
    assert "TORCH_INDEX=https://download.pytorch.org/whl/cpu" in cmd
    r = subprocess.run(
        ["make", "-n", "python-deps", "TORCH_INDEX=https://download.pytorch.org/whl/cpu", "VENV=/nonexistent/venv"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    assert (
        "pip install -q --disable-pip-version-check torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
        in r.stdout
    )


def test_make_site_needs_no_browser():
    if not shutil.which("make"):
        pytest.skip("missing dependency: make: install GNU make")

    def dry(goal):
        # -B: every step as if nothing were installed yet; nothing runs (-n)
        return subprocess.run(
            ["make", "-n", "-B", goal, "CHROMIUM=/nonexistent/chromium", "VENV=/nonexistent/venv"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    site, test = dry("site"), dry("test")
    assert "nilmbuild site" in site and "npm ci" in site and "pip install" in site
    assert "chromium" not in site.lower()
    # node and npm (JS tests, npm ci) come from Debian when missing; that is the only package the site installs
    installs = [line for line in site.splitlines() if "apt-get install" in line]
    assert installs and all("install -y -qq nodejs npm" in line or "install -y nodejs npm" in line for line in installs)
    assert "apt-get install -y -qq chromium" in test  # the browser is set up for the tests only
    fast = dry("test-fast")
    assert "not browser and not slow and not realdata" in fast and "chromium" not in fast.lower()

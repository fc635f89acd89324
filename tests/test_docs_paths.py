"""Every file or folder docs/internals.md names exists (issue 33: it once told you to edit a views/__init__.py that
was not there). A path is a backticked word with a "/" or a file extension; it may be written from the repository
root or from a folder a newcomer meets first (nilmbuild/, nilmbuild/site/, static/js/, ...), and may end with
":name" (a symbol in the file). Placeholders (SLUG, <slug>, KEY, globs) and output paths (site/, runs/, ~/.cache)
are not files to find."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "internals.md"
BASES = ("", "nilmbuild", "nilmbuild/site", "static/js", "static", "templates", "tests", "docs", "nilmbuild/model")
EXTENSIONS = (".py", ".js", ".mjs", ".html", ".md", ".css", ".frag", ".vert", ".json", ".toml", ".typed", ".pt")
PLACEHOLDER = re.compile(
    r"SLUG|<|>|\*|\{|KEY|OUT\.|\bN\b|\.\.\.|~|\$|^site/|^runs/|^/|page_y|test_x|_assets|^nilmbuild-|out_dir|^window\.|^src/"
)  # placeholders, what a build writes (site files, a wheel's _assets), the upstream repositories' files (src/...)
SOURCE_DIRS = ("nilmbuild", "static", "templates", "tests", "docs")


def named_paths(text: str) -> list[str]:
    out = []
    for token in re.findall(r"`([^`\s]+)`", text):
        path = token.split(":")[0].rstrip(",.;)")
        if ("/" not in path and not path.endswith(EXTENSIONS)) or PLACEHOLDER.search(path) or "=" in path:
            continue
        if path.startswith(("http", "node_modules", "python", "-", "#")) or "(" in path:
            continue
        out.append(path)
    return sorted(set(out))


def exists(path: str) -> bool:
    """From the root or a first folder; a bare file name (a section's own module, e.g. `ddp.py` under Training) may
    be anywhere in the sources."""
    if any((ROOT / base / path).exists() for base in BASES):
        return True
    return "/" not in path and any(next((ROOT / d).rglob(path), None) is not None for d in SOURCE_DIRS)


def test_the_doc_names_paths():
    assert len(named_paths(DOC.read_text(encoding="utf-8"))) > 40


@pytest.mark.parametrize("path", named_paths(DOC.read_text(encoding="utf-8")))
def test_every_path_in_internals_exists(path):
    assert exists(path), f"docs/internals.md names {path}, which is not in the repository"


def test_the_check_finds_a_missing_path():
    assert named_paths("edit `views/__init__.py` and `nilmbuild/site/pages.py:NAV_ORDER`") == [
        "nilmbuild/site/pages.py",
        "views/__init__.py",
    ]
    assert not exists("views/__init__.py") and exists("nilmbuild/site/pages.py")

"""The `nilmbuild` command line. Each subcommand lives next to the code it drives; this file only wires them."""

from __future__ import annotations

import importlib
import sys
import warnings
from pathlib import Path

import click

from nilmbuild import __version__
from nilmbuild.errors import DataWarning, UserError


class _Group(click.Group):
    """A Click group that turns UserError into a one-line message and exit code 2, never a traceback, and imports
    each subcommand's module only when it is needed (COMMANDS)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, _, attr = COMMANDS[name].partition(":")
        return getattr(importlib.import_module(module), attr)

    def invoke(self, ctx: click.Context):
        with warnings.catch_warnings():
            warnings.simplefilter("always", DataWarning)
            warnings.showwarning = _show_warning
            try:
                return super().invoke(ctx)
            except UserError as e:
                click.echo(f"error: {e}", err=True)
                sys.exit(2)


_PACKAGE = str(Path(__file__).resolve().parent)
_default_showwarning = warnings.showwarning


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings about the user's data, raised by nilmbuild's own code: one line, ``warning: MESSAGE``."""
    if issubclass(category, DataWarning) or str(Path(filename).resolve()).startswith(_PACKAGE):
        click.echo(f"warning: {message}", err=True)
    else:
        _default_showwarning(message, category, filename, lineno, file, line)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="nilmbuild")
def main() -> None:
    """Build the interactive, tensor-exact explanation of NILMFormer.

    nilmbuild trains (or loads) NILMFormer, runs a fixed example batch through it, captures every
    intermediate tensor, and renders self-contained WebGL pages from them.

    \b
    Quick start:
      nilmbuild site                 # whole site from the shipped checkpoint + built-in data
      nilmbuild info                 # configuration and parameter counts
      nilmbuild site --out public/   # somewhere else
    """


#: Subcommand -> "module:function". Imported when the command runs (or `nilmbuild --help` lists them), so a
#: command pays only for its own imports: `nilmbuild site` with a cached site never imports torch.
COMMANDS = {
    "info": "nilmbuild.model.cli:info",
    "capture": "nilmbuild.capture.cli:capture",
    "inspect": "nilmbuild.capture.cli:inspect_cmd",
    "data": "nilmbuild.data.cli:data",
    "site": "nilmbuild.site.cli:site",
    "serve": "nilmbuild.site.cli:serve",
    "disaggregate": "nilmbuild.infer.cli:disaggregate",
    "evaluate": "nilmbuild.infer.cli:evaluate",
    "train": "nilmbuild.train.cli:train",
    "calibrate": "nilmbuild.train.cli:calibrate",
    "landscape": "nilmbuild.train.cli:landscape",
    "import": "nilmbuild.importer.cli:import_cmd",
    "explain": "nilmbuild.explain_cli:explain",
}


def run() -> None:
    """The `nilmbuild` command (console script, `python -m nilmbuild`): main(), then a hard exit that skips the
    interpreter's teardown, as mypy does. After a site build that teardown is ~0.5 s of garbage collection over
    torch's objects, and nothing in it is ours to finish: every output is written atomically before main returns,
    the threads started for slow products (threads.start_once) are waited for and stdout/stderr are flushed.
    Tests call main() in-process (CliRunner), never this."""
    try:
        main(prog_name="nilmbuild")
        code = 0
    except SystemExit as e:  # click's standalone mode always ends here
        code = e.code
    _hard_exit(code)


def _hard_exit(code) -> None:
    """os._exit with sys.exit's meaning of `code` (None -> 0, a message -> printed, 1)."""
    import os

    from nilmbuild.threads import wait_started

    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    wait_started()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (e.g. `nilmbuild --help | head`)
            code = code or 120  # what Python's own exit reports when stdout cannot be flushed
    os._exit(code)

"""The `nilmbuild` command line. Each subcommand lives next to the code it drives; this file only wires them."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import click

from nilmbuild import __version__
from nilmbuild.errors import DataWarning, UserError


class _Group(click.Group):
    """A Click group that turns UserError into a one-line message and exit code 2, never a traceback."""

    def invoke(self, ctx: click.Context):
        from nilmbuild.data.loaders import default_unit

        unit = default_unit.set(None)  # --unit (data.cli.unit_option) sets it for this command only
        with warnings.catch_warnings():
            warnings.simplefilter("always", DataWarning)
            warnings.showwarning = _show_warning
            try:
                return super().invoke(ctx)
            except UserError as e:
                click.echo(f"error: {e}", err=True)
                sys.exit(2)
            finally:
                default_unit.reset(unit)


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


def _register() -> None:
    from nilmbuild.model.cli import info

    main.add_command(info)
    from nilmbuild.capture.cli import capture, inspect_cmd

    main.add_command(capture)
    main.add_command(inspect_cmd)
    from nilmbuild.data.cli import data

    main.add_command(data)
    from nilmbuild.site.cli import serve, site

    main.add_command(site)
    main.add_command(serve)
    from nilmbuild.infer.cli import disaggregate, evaluate

    main.add_command(disaggregate)
    main.add_command(evaluate)

    from nilmbuild.train.cli import calibrate, landscape, train

    main.add_command(train)
    main.add_command(calibrate)
    main.add_command(landscape)


_register()

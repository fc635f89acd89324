"""`python -m nilmbuild ...` is the `nilmbuild` command."""

from nilmbuild.cli import run

if __name__ == "__main__":
    run()

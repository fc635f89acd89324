"""`python -m nilmbuild ...` is the `nilmbuild` command."""

from nilmbuild.cli import main

if __name__ == "__main__":
    main(prog_name="nilmbuild")

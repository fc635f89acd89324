"""User-facing errors: one line that says what is wrong and what to do. The CLI prints them without a traceback."""


class UserError(Exception):
    """A problem with the user's input (file, option, data) that they can fix.

    The message must be one line, name the file (and line) where it applies, and say what to do.
    """


class DataWarning(UserWarning):
    """Something in the user's data that nilmbuild fixed or left out (negative readings clipped, columns
    ignored). The CLI prints it as one line, ``warning: MESSAGE``."""

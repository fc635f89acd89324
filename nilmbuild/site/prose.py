"""Numbers in page prose: a model size written as a word ("three encoder layers") comes from the model, through
`spelled` (also the templates' ``spelled`` filter: ``{{ site.model.n_layers | spelled }}``)."""

from __future__ import annotations

_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


def spelled(n: int) -> str:
    """0..12 as an English word ("three"), larger numbers as digits ("16")."""
    n = int(n)
    return _WORDS[n] if 0 <= n < len(_WORDS) else str(n)

"""nilmbuild: train/load NILMFormer, capture every intermediate tensor, render an interactive static site."""

__version__ = "0.1.0"


def load_model(path=None):
    """A checkpoint (None: the shipped one) with `.devices` and `.run_window(aggregate_w, start)`: see nilmbuild.api."""
    from nilmbuild.api import load_model as _load

    return _load(path)

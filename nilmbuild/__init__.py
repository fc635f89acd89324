"""nilmbuild: train/load NILMFormer, capture every intermediate tensor, render an interactive static site."""

__version__ = "0.1.0"

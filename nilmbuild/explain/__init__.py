"""Per-device input attributions (Captum) with measured quality: which steps of the aggregate, in watts, made
NILMFormer predict a device. `explain_window` (one window -> arrays), `quality_table` (every method measured on
the site's example windows); `nilmbuild explain` on the command line; docs/attributions.md."""

from .api import Explanation, explain_window
from .batch import captured_windows, quality_table
from .methods import METHODS, Settings
from .wrapper import Interval, Target, WattsToDevice

__all__ = [
    "METHODS",
    "Explanation",
    "Interval",
    "Settings",
    "Target",
    "WattsToDevice",
    "captured_windows",
    "explain_window",
    "quality_table",
]

"""NILMFormer in PyTorch, as ../shared/spec describes it. See docs/spec-notes.md for the choices made."""

from .config import DEFAULT_DEVICES, DeviceSpec, NILMFormerConfig
from .nilmformer import NILMFormer, NILMFormerOutput, count_params, param_table
from .trace import Trace, TraceRecord

__all__ = [
    "DEFAULT_DEVICES",
    "DeviceSpec",
    "NILMFormer",
    "NILMFormerConfig",
    "NILMFormerOutput",
    "Trace",
    "TraceRecord",
    "count_params",
    "param_table",
]

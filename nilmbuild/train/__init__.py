"""Training (architecture.md section 10): losses, device typing, PCGrad, multi-crop, the trainer, DDP."""

from .config import TrainConfig
from .device_types import classify, classify_prepared, device_specs, device_stats
from .losses import COMPONENTS, LossWeights, long_off_mask, loss_components
from .pcgrad import pcgrad_backward, project
from .schedule import schedule
from .trainer import train

__all__ = [
    "COMPONENTS",
    "LossWeights",
    "TrainConfig",
    "classify",
    "classify_prepared",
    "device_specs",
    "device_stats",
    "loss_components",
    "long_off_mask",
    "pcgrad_backward",
    "project",
    "schedule",
    "train",
]

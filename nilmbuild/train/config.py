"""A training run's configuration: TrainConfig (what `nilmbuild train`'s flags set, train/options.py, and what a
resume state stores), and the device it runs on. Data settings (source, unit, span, house, days, seed, splits, prep)
are fields like the others, so a resumed run reads its data exactly as it did; `data_settings()` is the one place
that hands the ones defining the data to the pipeline (load and provenance)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import torch

from nilmbuild.errors import UserError


@dataclass
class TrainConfig:
    source: str = "synthetic"
    unit: str | None = None  # of CSV power columns whose name has none (--unit; None: W)
    span: tuple | None = None  # (--start, --end) of the source (None: all of it); a resumed run reads it again
    house: int | tuple[int, ...] | None = None  # several: one model over those buildings (pipeline.train_data)
    days: int = 60  # simulator only
    seed: int = 0
    epochs: int | None = 10  # None only with resume: the resumed run's
    batch_size: int = 16  # per process under DDP
    lr: float = 2e-3  # peak; warm-up + cosine (lr_factor)
    weight_decay: float = 1e-2
    grad_clip: float = 1.0
    pcgrad: bool = True
    pcgrad_from_epoch: int | None = 0  # plain summed loss before this epoch (0-based), PCGrad from it on;
    # None -> the last quarter of the epochs
    max_minutes: float | None = None  # stop (resumable, best checkpoint written) after this wall time
    warmup_epochs: int | None = None  # None -> max(1, epochs // 4)
    val_from: str | None = None
    test_from: str | None = None
    devices: tuple[str, ...] | None = None  # None -> every device the source has a channel for
    out: str = "runs/model.pt"
    resume: str | None = None
    max_steps: int | None = None
    threads: int = 2
    model: dict = field(default_factory=dict)  # NILMFormerConfig overrides (tests use a tiny model)
    prep: dict = field(default_factory=dict)  # PrepConfig overrides (stride, fractions, ...)
    progress: bool = True
    command: str = ""
    device: str = "auto"  # auto | cpu | cuda (bf16 autocast on cuda)
    crop_len: int | None = None  # after warm-up, crops of this many steps; None -> window // 2, 0 -> no crops
    random_offsets: bool = True  # fresh random window offsets every epoch (False: prepare()'s stride grid)
    windows_per_epoch: int | None = None  # with random offsets: windows drawn per epoch (None: as many as the grid has)
    on_share: float = 0.0  # with random offsets: share of the windows drawn where a device, picked at random, is ON
    loss_weighting: str = "fixed"  # fixed (device-type weights) | uncertainty (learned, Kendall et al. 2018)
    lr_warmup_frac: float = 0.05  # linear learning-rate warm-up over this share of the steps, then cosine
    lr_min_ratio: float = 0.05  # ... down to lr * lr_min_ratio at the last step
    scaler: str = "max"  # aggregate scaler (architecture.md 2.2); appliance targets stay max-scaled

    def data_settings(self) -> dict:
        """Source, house(s), days, seed, unit and span: what `pipeline.load_training_data` reads and
        `pipeline.training_provenance` records, from this one place (a resumed run's saved config gives the same)."""
        house = tuple(self.house) if isinstance(self.house, (list, tuple)) else self.house
        return {
            "source": self.source,
            "house": house,
            "days": self.days,
            "seed": self.seed,
            "unit": self.unit,
            "span": tuple(self.span) if self.span else None,
        }

    def pcgrad_start(self) -> int:
        if self.pcgrad_from_epoch is not None:
            return self.pcgrad_from_epoch
        return self.epochs - max(1, self.epochs // 4)

    def warmup(self) -> int:
        return self.warmup_epochs if self.warmup_epochs is not None else max(1, self.epochs // 4)


def resolve_device(name: str) -> torch.device:
    if name not in ("auto", "cpu", "cuda"):
        raise UserError(f"unknown device {name!r}; use auto, cpu or cuda")
    if name == "cuda" and not torch.cuda.is_available():
        raise UserError("--device cuda: no CUDA GPU is visible to torch; use --device cpu (or auto)")
    return torch.device("cuda" if name != "cpu" and torch.cuda.is_available() else "cpu")


def config_dict(tc: TrainConfig) -> dict:
    """The TrainConfig as the JSON-able dict a checkpoint stores (extra["train_config"], the resume state)."""
    d = asdict(tc)
    d["devices"] = list(tc.devices) if tc.devices else None
    d["house"] = list(tc.house) if isinstance(tc.house, (list, tuple)) else tc.house
    return d

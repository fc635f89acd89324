"""Resume state: RunState is exactly what `nilmbuild train --resume` restores (the `resume` dict of OUT.resume.pt),
and read_resume turns a resume file back into the run's TrainConfig (its data settings, the unit and span included, as
they were), the checkpoint and the RunState."""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch

from nilmbuild.errors import UserError
from nilmbuild.model.checkpoint import load_checkpoint
from nilmbuild.units import same_unit

from .config import TrainConfig


@dataclass
class RunState:
    """Exactly what `--resume` restores: the `resume` dict of OUT.resume.pt (these keys, in this order)."""

    optimizer: dict  # AdamW state_dict
    epoch: int  # where to continue: epoch (0-based) and batch inside it
    batch: int
    step: int  # optimizer steps so far (the LR schedule's position)
    rng: torch.Tensor  # torch's global RNG (dropout)
    train_log: dict
    best_val_loss: float
    best_epoch: int | None
    best_state: dict | None  # the best epoch's state_dict so far
    acc: dict | None  # Accumulator.to_dict() of a partial epoch
    classification: dict  # device types (the model's heads depend on them)
    train_config: dict  # the TrainConfig the run started with
    log_vars: list | None = None  # learned task weights (--loss-weighting uncertainty)

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, d: dict) -> RunState:
        return cls(**{f.name: d.get(f.name) for f in fields(cls)})


def read_resume(tc: TrainConfig) -> tuple[TrainConfig, object, RunState]:
    """tc.resume -> (the saved TrainConfig with this run's stop/progress settings, the loaded checkpoint, RunState)."""
    loaded = load_checkpoint(tc.resume)
    resume = loaded.extra.get("resume")
    if not resume:
        raise UserError(f"{tc.resume} has no resume state: pass the '.resume.pt' file written next to --out")
    saved = resume["train_config"]
    keep = {
        "resume": tc.resume,
        "max_steps": tc.max_steps,
        "max_minutes": tc.max_minutes,
        "progress": tc.progress,
        "threads": tc.threads,
        "command": tc.command,
    }
    if tc.epochs is not None and tc.epochs != saved["epochs"]:
        keep["epochs"] = tc.epochs
    if tc.unit is not None and not same_unit(tc.unit, saved.get("unit")):
        raise UserError(
            f"{tc.resume} was trained with --unit {saved.get('unit') or 'W'}: leave --unit out (the resumed run "
            "reads its data as it did) or start a new run"
        )
    _same_span(tc, saved)
    tc = TrainConfig(**{**saved, **keep, "devices": tuple(saved["devices"]) if saved.get("devices") else None})
    return tc, loaded, RunState.from_dict(resume)


def _same_span(tc: TrainConfig, saved: dict) -> None:
    """--start/--end on resume: the run's own span again is fine, another one is a one-line error (as --unit)."""
    given, was = tuple(tc.span or (None, None)), tuple(saved.get("span") or (None, None))
    if tc.span is not None and given != was:
        start, end = was[0] or "(none)", was[1] or "(none)"
        raise UserError(
            f"{tc.resume} was trained with --start {start} --end {end}: "
            "leave --start/--end out (the resumed run reads the span it was started with) or start a new run"
        )


def resume_path(out: str) -> str:
    return str(out)[:-3] + ".resume.pt" if str(out).endswith(".pt") else str(out) + ".resume.pt"

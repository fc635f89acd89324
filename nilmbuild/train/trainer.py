"""The training loop (architecture.md 10.4): data -> device types -> NILMFormer -> AdamW with the multi-task
loss, optional PCGrad, warm-up then event-biased multi-crop, anti-collapse and output-stats schedules,
validation each epoch, best checkpoint by validation loss, resumable checkpoints, optional DDP.

Reproducibility: the model is initialised after torch.manual_seed(seed); the batch order comes from a
DistributedSampler(seed, epoch), crop masks and PCGrad's random orders from generators seeded by
(seed, epoch, batch), and dropout from the global RNG whose state is saved in resume checkpoints; so
the same arguments give identical weights, and a resumed run continues exactly where it stopped.
"""

from __future__ import annotations

import copy
import math
import sys
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field, fields

import numpy as np
import torch
from torch.utils.data.distributed import DistributedSampler

from nilmbuild.errors import UserError
from nilmbuild.model.checkpoint import load_checkpoint, save_checkpoint
from nilmbuild.model.config import NILMFormerConfig
from nilmbuild.model.nilmformer import NILMFormer
from nilmbuild.pipeline import load_training_data, training_provenance
from nilmbuild.units import same_unit

from .calibrate import apply_thresholds, calibrate_gates
from .crops import sample_crops, take_crops
from .device_types import classify_prepared, device_specs
from .losses import (
    COMPONENTS,
    LossWeights,
    device_losses,
    long_off_mask,
    loss_components,
    uncertainty_weighted,
    weight_matrix,
)
from .pcgrad import pcgrad_backward
from .trajectory import append_epoch, trajectory_path
from .windows import TrainSeries

BASE_COMPONENTS = tuple(c for c in COMPONENTS if c not in ("anti_collapse", "out_stats"))


@dataclass
class TrainConfig:
    source: str = "synthetic"
    unit: str | None = None  # of CSV power columns whose name has none (--unit; None: W)
    span: tuple | None = None  # (--start, --end) of the source (None: all of it); a resumed run reads it again
    house: int | None = None
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

    def pcgrad_start(self) -> int:
        if self.pcgrad_from_epoch is not None:
            return self.pcgrad_from_epoch
        return self.epochs - max(1, self.epochs // 4)

    def warmup(self) -> int:
        return self.warmup_epochs if self.warmup_epochs is not None else max(1, self.epochs // 4)


def lr_factor(step: int, total: int, warmup_frac: float, min_ratio: float) -> float:
    """Linear warm-up over warmup_frac of the steps, then cosine decay to min_ratio at the last step."""
    warm = max(1, int(round(warmup_frac * total)))
    if step < warm:
        return (step + 1) / warm
    t = min(1.0, (step - warm) / max(1, total - warm))
    return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * t))


def resolve_device(name: str) -> torch.device:
    if name not in ("auto", "cpu", "cuda"):
        raise UserError(f"unknown device {name!r}; use auto, cpu or cuda")
    if name == "cuda" and not torch.cuda.is_available():
        raise UserError("--device cuda: no CUDA GPU is visible to torch; use --device cpu (or auto)")
    return torch.device("cuda" if name != "cpu" and torch.cuda.is_available() else "cpu")


def schedule(epoch: int, frac: float, epochs: int, warmup: int) -> dict:
    """10.4: warm-up (no crops, anti-collapse 1, output-stats alpha ramps 0 -> 1), then crops, alpha 1 and
    anti-collapse decaying linearly 1 -> 0.2 by the last epoch. frac in [0, 1): progress inside the epoch."""
    if epoch < warmup:
        return {"crops": False, "anti_collapse": 1.0, "out_stats_alpha": min(1.0, (epoch + frac) / warmup)}
    n = max(1, epochs - warmup)
    t = min(1.0, (epoch - warmup + frac + 1e-9) / n) if n > 1 else 1.0
    return {"crops": True, "anti_collapse": 1.0 - 0.8 * t, "out_stats_alpha": 1.0}


# ---- data ------------------------------------------------------------------------------------------


def load_prepared(tc: TrainConfig, window: int):
    """The run's data (nilmbuild.pipeline: the one place that knows how a checkpoint's data is prepared)."""
    return load_training_data(
        tc.source,
        window=window,
        house=tc.house,
        days=tc.days,
        seed=tc.seed,
        devices=tc.devices,
        val_from=tc.val_from,
        test_from=tc.test_from,
        scaler=tc.scaler,
        prep=tc.prep,
        unit=tc.unit,
        span=tuple(tc.span) if tc.span else None,
    )


def tensors(split, long_off_steps) -> dict:
    y = torch.from_numpy(split.y)  # (N, D, 2, L)
    st = split.y[:, :, 1]
    return {
        "x": torch.from_numpy(split.x),
        "y": y[:, :, 0].contiguous(),
        "s": y[:, :, 1].contiguous(),
        "lo": torch.from_numpy(long_off_mask(st, long_off_steps)) if st.size else torch.zeros(st.shape),
    }


# ---- validation ------------------------------------------------------------------------------------


@torch.no_grad()
def validate(model, data, weights: list[LossWeights], prepared, pos_weight, batch_size: int = 32) -> dict:
    """Validation loss (the 8 base components with the type weights on the soft-gated output: no crops, no
    schedule terms, and no dependence on the hard-gate thresholds, which are only calibrated at the end) and
    per-device MAE (W) / F1 of the hard-gated output on the windows (no post-processing)."""
    from nilmbuild.data.preprocess import scaler_from_dict
    from nilmbuild.infer.metrics import all_metrics

    N = data["x"].shape[0]
    if N == 0:
        return {}
    was = model.training
    model.eval()
    sums, preds = None, []
    wm = weight_matrix(weights, 0.0, 0.0)
    dev = next(model.parameters()).device
    for a in range(0, N, batch_size):
        sl = slice(a, a + batch_size)
        x = data["x"][sl].to(dev)
        soft = model(x, gate_mode="soft")  # the loss: threshold-free, as trained
        out = model(x)  # MAE / F1: the hard gate, as at inference
        c = loss_components(
            soft.power,
            soft.gate_logit,
            *(data[k][sl].to(dev) for k in ("y", "s")),
            None,
            data["lo"][sl].to(dev),
            pos_weight,
        )
        n = out.power.shape[0]
        sums = {k: (sums[k] if sums else 0) + v.cpu() * n for k, v in c.items() if k in BASE_COMPONENTS}
        preds.append(out.power.float().cpu())
    model.train(was)
    comps = {k: v / N for k, v in sums.items()}
    per_dev = sum(wm[k] * v for k, v in comps.items())
    devs = list(prepared.devices)
    P = torch.cat(preds).numpy()  # (N, D, L)
    yw = np.stack(
        [
            scaler_from_dict(prepared.scalers["appliances"][d]).inverse(data["y"][:, i].numpy()).ravel()
            for i, d in enumerate(devs)
        ]
    )
    pw = np.stack(
        [
            np.clip(scaler_from_dict(prepared.scalers["appliances"][d]).inverse(P[:, i]).ravel(), 0, None)
            for i, d in enumerate(devs)
        ]
    )
    st = data["s"].numpy().transpose(1, 0, 2).reshape(len(devs), -1)
    m = all_metrics(devs, yw, pw, st, prepared.thresholds_w)
    return {
        "loss": float(per_dev.sum()),
        "loss_per_device": {d: float(per_dev[i]) for i, d in enumerate(devs)},
        "devices": {d: {"mae": _f(m[d]["mae"]), "f1": _f(m[d]["f1"])} for d in devs},
    }


def val_baseline(data, prepared) -> dict:
    """Mean-per-appliance baseline on the validation windows (train-split mean power)."""
    from nilmbuild.data.preprocess import scaler_from_dict
    from nilmbuild.infer.metrics import mean_baseline

    devs = list(prepared.devices)
    if data["x"].shape[0] == 0:
        return {}
    tr = prepared.train
    means = {d: float(tr.appliances_w[i][tr.valid].mean()) for i, d in enumerate(devs)}
    yw = np.stack(
        [
            scaler_from_dict(prepared.scalers["appliances"][d]).inverse(data["y"][:, i].numpy()).ravel()
            for i, d in enumerate(devs)
        ]
    )
    st = data["s"].numpy().transpose(1, 0, 2).reshape(len(devs), -1)
    m = mean_baseline(devs, yw, st, prepared.thresholds_w, means)
    return {d: {"mae": _f(m[d]["mae"]), "f1": _f(m[d]["f1"]), "mean_w": means[d]} for d in devs}


def _f(v) -> float | None:
    v = float(v)
    return round(v, 6) if math.isfinite(v) else None


# ---- what an epoch adds up, and what a resume restores --------------------------------------------


class Accumulator:
    """Sums over one epoch's steps: loss components and task losses per device, the total, PCGrad cosines
    and projections, step time. Stored in .resume.pt as the plain dict `to_dict()` returns."""

    def __init__(self, n_devices: int) -> None:
        n = n_devices
        self.comps = {k: [0.0] * n for k in COMPONENTS}
        self.dev_loss = [0.0] * n
        self.total = 0.0
        self.cos = [[0.0] * n for _ in range(n)]
        self.proj = 0
        self.steps = 0
        self.time = 0.0
        self.pcgrad = 0  # steps that used PCGrad (the cosines' count)

    def add(self, comps: dict, losses, total, cos, nproj: int, dt: float) -> None:
        self.steps += 1
        self.time += dt
        self.total += float(total.detach())
        self.proj += nproj
        for k, v in comps.items():
            self.comps[k] = [a + float(u) for a, u in zip(self.comps[k], v.detach())]
        self.dev_loss = [a + float(u) for a, u in zip(self.dev_loss, losses.detach())]
        if cos is not None:
            self.pcgrad += 1
            self.cos = [[a + float(u) for a, u in zip(ra, ru)] for ra, ru in zip(self.cos, cos)]

    def to_dict(self) -> dict:
        return {
            "comps": self.comps,
            "dev_loss": self.dev_loss,
            "total": self.total,
            "cos": self.cos,
            "proj": self.proj,
            "steps": self.steps,
            "time": self.time,
            "pcgrad": self.pcgrad,
        }

    @classmethod
    def from_dict(cls, d: dict | None) -> Accumulator | None:
        if d is None:
            return None
        acc = cls(len(d["dev_loss"]))
        for k, v in d.items():
            setattr(acc, k, v)
        return acc

    def record(self, epoch: int, devs: list, sch: dict, lr: float) -> dict:
        """The epoch's entry in train_log["epochs"] (means over its steps)."""
        n = max(1, self.steps)
        comps = {d: {k: round(self.comps[k][i] / n, 6) for k in COMPONENTS} for i, d in enumerate(devs)}
        for i, d in enumerate(devs):
            comps[d]["total"] = round(self.dev_loss[i] / n, 6)
        npc = max(1, self.pcgrad)
        pairs = {
            f"{devs[i]}|{devs[j]}": round(self.cos[i][j] / npc, 4)
            for i in range(len(devs))
            for j in range(i + 1, len(devs))
        }
        return {
            "epoch": epoch + 1,
            "steps": self.steps,
            "step_time_s": round(self.time / n, 3),
            "lr": lr,
            "schedule": {k: (round(v, 4) if isinstance(v, float) else v) for k, v in sch.items()},
            "loss": {"total": round(self.total / n, 6), "devices": comps},
            "pcgrad": {
                "enabled": bool(self.pcgrad),
                "mean_cos": pairs if self.pcgrad else {},
                "projections": self.proj,
                "projections_per_step": round(self.proj / npc, 3),
                "pcgrad_steps": self.pcgrad,
            },
        }


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
    tc = TrainConfig(**{**saved, **keep, "devices": tuple(saved["devices"]) if saved.get("devices") else None})
    return tc, loaded, RunState.from_dict(resume)


class SingleProcess:
    """No process group: the Trainer's DDP hooks do nothing (nilmbuild.train.ddp.ProcessGroup has the real ones)."""

    rank, world = 0, 1

    def wrap(self, model):
        return model

    def no_sync(self, net, pcgrad: bool):
        return nullcontext()

    def after_backward(self, model, pcgrad: bool) -> None:
        pass

    def finish(self, model) -> None:
        pass


class Interrupted(Exception):
    pass


# ---- the loop --------------------------------------------------------------------------------------


class Trainer:
    """One training run: `Trainer(tc).run()`. Set-up reads the data, types the devices, builds the model and
    the optimizer, and restores a RunState when tc.resume is set; `run` loops `run_epoch` (each batch one
    `step`), `end_epoch` validates and `save`s after every epoch."""

    def __init__(self, tc: TrainConfig, log=print, group=None) -> None:
        torch.set_num_threads(max(1, tc.threads))
        self.device = resolve_device(tc.device)
        if tc.loss_weighting not in ("fixed", "uncertainty"):
            raise UserError(f"unknown loss weighting {tc.loss_weighting!r}; use fixed or uncertainty")
        self.group = group or SingleProcess()
        self.is_main = self.group.rank == 0
        loaded = resumed = None
        if tc.resume:
            tc, loaded, resumed = read_resume(tc)
        self.tc, self.log = tc, log
        self._setup_data(resumed.classification if resumed else None)
        self._setup_model(loaded)
        self._setup_schedule()
        if resumed:
            self.restore(resumed)
        if "baseline_val" not in self.train_log and self.is_main:
            self.train_log["baseline_val"] = val_baseline(self.va, self.prepared)
        self.provenance = training_provenance(
            self.prepared,
            source=tc.source,
            house=tc.house,
            days=tc.days,
            seed=tc.seed,
            unit=tc.unit,
            span=tuple(tc.span) if tc.span else None,
            command=tc.command,
        )
        self.extra = {"device_types": self.classification, "train_config": _tc_dict(tc)}

    def _setup_data(self, classification: dict | None) -> None:
        tc = self.tc
        self.window = NILMFormerConfig(**tc.model).window
        self.prepared = load_prepared(tc, self.window)
        self.classification = classification or classify_prepared(self.prepared)
        self.devs = list(self.prepared.devices)
        self.weights = [LossWeights(**self.classification[d]["weights"]) for d in self.devs]
        self.pos_weight = torch.tensor([w.pos_weight for w in self.weights])
        lo_steps = [w.long_off_steps for w in self.weights]
        self.tr, self.va = tensors(self.prepared.train, lo_steps), tensors(self.prepared.val, lo_steps)
        self.series = TrainSeries(self.prepared, lo_steps, self.window) if tc.random_offsets else None

    def _setup_model(self, loaded) -> None:
        tc, devs = self.tc, self.devs
        cfg = NILMFormerConfig(**{**tc.model, "devices": device_specs({d: self.classification[d] for d in devs})})
        torch.manual_seed(tc.seed)
        self.model = NILMFormer(cfg)
        if loaded is not None:
            self.model.load_state_dict(loaded.model.state_dict())
        self.model.to(self.device).train()
        self.net = self.group.wrap(self.model)
        self.shared = [p for n, p in self.model.named_parameters() if not n.startswith("heads.")]
        self.own = [list(self.model.heads[d].parameters()) for d in devs]
        # uncertainty weighting (Kendall, Gal & Cipolla 2018): task loss exp(-s_i) L_i + s_i, s_i = log sigma_i^2 learned
        self.log_vars = (
            torch.zeros(len(devs), device=self.device, requires_grad=True)
            if tc.loss_weighting == "uncertainty"
            else None
        )
        groups = [{"params": list(self.model.parameters())}]
        if self.log_vars is not None:
            groups.append({"params": [self.log_vars], "weight_decay": 0.0})
        self.opt = torch.optim.AdamW(groups, lr=tc.lr, weight_decay=tc.weight_decay)
        self.autocast = (
            (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if self.device.type == "cuda" else nullcontext
        )

    def _setup_schedule(self) -> None:
        tc = self.tc
        self.n_windows = (
            int(tc.windows_per_epoch) if (self.series is not None and tc.windows_per_epoch) else self.tr["x"].shape[0]
        )
        self.crop_len = self.window // 2 if tc.crop_len is None else int(tc.crop_len)
        self.sampler = DistributedSampler(
            range(self.n_windows), num_replicas=self.group.world, rank=self.group.rank, shuffle=True, seed=tc.seed
        )
        self.steps_per_epoch = math.ceil(len(self.sampler) / tc.batch_size)
        self.total_steps = tc.epochs * self.steps_per_epoch
        self.warmup = tc.warmup()
        self.train_log = {
            "epochs": [],
            "devices": self.devs,
            "components": list(COMPONENTS),
            "steps_per_epoch": self.steps_per_epoch,
            "pcgrad": tc.pcgrad,
            "world_size": self.group.world,
            "warmup_epochs": self.warmup,
        }
        self.epoch, self.batch, self.iter_num = 0, 0, 0  # position: the batch being run, optimizer steps done
        self.best = {"val_loss": float("inf"), "epoch": None, "state": None}
        self.acc: Accumulator | None = None

    # -- resume --------------------------------------------------------------------------------------

    def run_state(self, epoch: int, batch: int, acc: Accumulator | None) -> RunState:
        return RunState(
            optimizer=self.opt.state_dict(),
            epoch=epoch,
            batch=batch,
            step=self.iter_num,
            rng=torch.get_rng_state(),
            train_log=self.train_log,
            best_val_loss=self.best["val_loss"],
            best_epoch=self.best["epoch"],
            best_state=self.best["state"],
            acc=acc.to_dict() if acc is not None else None,
            classification=self.classification,
            train_config=_tc_dict(self.tc),
            log_vars=self.log_vars.detach().cpu().tolist() if self.log_vars is not None else None,
        )

    def restore(self, rs: RunState) -> None:
        self.opt.load_state_dict(rs.optimizer)
        self.epoch, self.batch, self.iter_num = rs.epoch, rs.batch, rs.step
        self.train_log = rs.train_log
        self.best = {"val_loss": rs.best_val_loss, "epoch": rs.best_epoch, "state": rs.best_state}
        self.acc = Accumulator.from_dict(rs.acc)
        torch.set_rng_state(rs.rng)
        if self.log_vars is not None and rs.log_vars is not None:
            with torch.no_grad():
                self.log_vars.copy_(torch.tensor(rs.log_vars))

    # -- saving --------------------------------------------------------------------------------------

    def save_resume(self, epoch: int, batch: int, acc: Accumulator | None) -> None:
        """OUT.resume.pt: the last weights + the RunState that continues at (epoch, batch)."""
        if not self.is_main:
            return
        save_checkpoint(
            resume_path(self.tc.out),
            self.model,
            scalers=self.prepared.scalers,
            train_log=self.train_log,
            provenance=self.provenance,
            extra={**self.extra, "resume": self.run_state(epoch, batch, acc).to_dict()},
        )

    def save(self, calibrate: bool = False) -> None:
        """OUT: the best weights so far (gate thresholds calibrated at the end of the run)."""
        if not self.is_main:
            return
        final = copy.deepcopy(self.model).cpu()
        if self.best["state"] is not None:
            final.load_state_dict(self.best["state"])
        if calibrate:
            cal = calibrate_gates(final, self.prepared, self.tc.batch_size)
            apply_thresholds(final, {d: c["threshold"] for d, c in cal.items()})
            self.train_log["gate_calibration"] = cal
        found = self.best["epoch"] is not None
        save_checkpoint(
            self.tc.out,
            final,
            scalers=self.prepared.scalers,
            train_log=self.train_log,
            provenance=self.provenance,
            extra={
                **self.extra,
                "best_epoch": (self.best["epoch"] + 1) if found else None,
                "best_val_loss": _f(self.best["val_loss"]) if found else None,
            },
        )

    # -- one step, one epoch -------------------------------------------------------------------------

    def _batch(self, data: dict, idx, sch: dict, gen: torch.Generator):
        """The batch's windows (cropped to loss masks after warm-up) on the device -> x, y, s, lo, pos."""
        x, y, s, lo = (data[k][idx] for k in ("x", "y", "s", "lo"))
        pos = None
        if sch["crops"] and self.crop_len:
            rows, pos = sample_crops(s, gen, self.crop_len)
            x, y, s, lo = (take_crops(t, rows, pos, self.crop_len) for t in (x, y, s, lo))
            pos = pos.to(self.device)
        x, y, s, lo = (t.to(self.device, non_blocking=True) for t in (x, y, s, lo))
        return x, y, s, lo, pos

    def step(self, data: dict, idx, epoch: int, b: int):
        """One optimizer step on the windows `idx` of `data` -> (schedule, comps, losses, total, cos, projections)."""
        tc = self.tc
        sch = schedule(epoch, b / self.steps_per_epoch, tc.epochs, self.warmup)
        gen = torch.Generator().manual_seed(tc.seed * 1_000_003 + epoch * 10_007 + b)  # crops, PCGrad order
        for g in self.opt.param_groups:
            g["lr"] = tc.lr * lr_factor(self.iter_num, self.total_steps, tc.lr_warmup_frac, tc.lr_min_ratio)
        x, y, s, lo, pos = self._batch(data, idx, sch, gen)
        self.opt.zero_grad(set_to_none=True)
        use_pcgrad = tc.pcgrad and len(self.devs) > 1 and epoch >= tc.pcgrad_start()
        with self.group.no_sync(self.net, use_pcgrad):
            with self.autocast():
                out = self.net(x, pos_start=pos)
            comps = loss_components(out.power.float(), out.gate_logit.float(), y, s, None, lo, self.pos_weight)
            losses = device_losses(comps, weight_matrix(self.weights, sch["anti_collapse"], sch["out_stats_alpha"]))
            task = losses if self.log_vars is None else uncertainty_weighted(losses, self.log_vars)
            total = task.sum()
            if use_pcgrad:
                cos, nproj = pcgrad_backward(task, self.shared, self.own, gen)
                if self.log_vars is not None:  # d task_i / d s_i = 1 - exp(-s_i) L_i (heads of no other task)
                    self.log_vars.grad = (1.0 - torch.exp(-self.log_vars) * losses).detach()
            else:
                total.backward()
                cos, nproj = None, 0
        self.group.after_backward(self.model, use_pcgrad)
        if tc.grad_clip:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), tc.grad_clip)
        self.opt.step()
        self.iter_num += 1
        return sch, comps, losses, total, cos, nproj

    def stop_reason(self, t_start: float) -> str | None:
        tc = self.tc
        if tc.max_steps is not None and self.iter_num >= tc.max_steps:
            return "max_steps"
        if tc.max_minutes is not None and time.perf_counter() - t_start > 60 * tc.max_minutes:
            return "max_minutes"
        return None

    def run_epoch(self, epoch: int, first: int, t_start: float) -> str | None:
        """Batches first.. of `epoch` (fresh random windows, this epoch's sampler order) -> why it stopped early, or None."""
        tc = self.tc
        self.batch = first
        self.sampler.set_epoch(epoch)
        order = torch.tensor(list(iter(self.sampler)))
        data = (
            self.series.draw(self.n_windows, tc.seed * 1_000_003 + epoch, tc.on_share)
            if self.series is not None
            else self.tr
        )
        if self.acc is None or first == 0:
            self.acc = Accumulator(len(self.devs))
        bar = _bar(tc, self.is_main, self.steps_per_epoch, first, epoch)
        try:
            for b in range(first, self.steps_per_epoch):
                self.batch = b
                stopped = self.stop_reason(t_start)
                if stopped:
                    return stopped
                t0 = time.perf_counter()
                idx = order[b * tc.batch_size : (b + 1) * tc.batch_size]
                sch, comps, losses, total, cos, nproj = self.step(data, idx, epoch, b)
                dt = time.perf_counter() - t0
                self.acc.add(comps, losses, total, cos, nproj, dt)
                if bar is not None:
                    bar.set_postfix(loss=f"{float(total.detach()):.4f}", proj=nproj, s_step=f"{dt:.1f}")
                    bar.update(1)
            self.batch = self.steps_per_epoch
            return None
        finally:
            if bar is not None:
                bar.close()

    # -- validation, the end of an epoch, the end of the run -----------------------------------------

    def validate(self) -> dict:
        return validate(self.model, self.va, self.weights, self.prepared, self.pos_weight, self.tc.batch_size)

    def keep_if_best(self, val_loss: float, epoch: int) -> None:
        if val_loss < self.best["val_loss"]:
            self.best = {
                "val_loss": val_loss,
                "epoch": epoch,
                "state": {k: t.detach().clone() for k, t in self.model.state_dict().items()},
            }

    def end_epoch(self, epoch: int) -> None:
        """Log the epoch, validate (rank 0), keep the best weights, write both checkpoints."""
        sch = schedule(epoch, (self.steps_per_epoch - 1) / self.steps_per_epoch, self.tc.epochs, self.warmup)
        rec = self.acc.record(epoch, self.devs, sch, self.opt.param_groups[0]["lr"])
        if self.log_vars is not None:
            rec["task_weights"] = {
                d: round(float(torch.exp(-self.log_vars[i].detach())), 5) for i, d in enumerate(self.devs)
            }
        if self.is_main:
            v = self.validate()
            rec["val"] = v
            self.keep_if_best(v.get("loss", rec["loss"]["total"]), epoch)
            self.train_log["epochs"].append(rec)
            self.log(_epoch_line(rec, self.train_log.get("baseline_val", {})))
            append_epoch(trajectory_path(self.tc.out), epoch + 1, self.model.state_dict())
        self.acc = None
        self.save_resume(epoch + 1, 0, None)
        self.save()

    def end_stopped(self, stopped: str) -> None:
        """--max-steps / --max-minutes: validate the partial epoch, write both checkpoints, say how to resume."""
        acc = self.acc
        if self.is_main and acc is not None and acc.steps > 0:  # the partial epoch's weights may be the best
            v = self.validate()
            self.train_log.setdefault("partial", []).append({"epoch": self.epoch + 1, "step": self.iter_num, "val": v})
            if v:
                self.keep_if_best(v["loss"], self.epoch)
        self.save_resume(self.epoch, self.batch, acc)
        self.save(calibrate=True)
        if self.is_main:
            tc = self.tc
            why = f"--max-steps {tc.max_steps}" if stopped == "max_steps" else f"--max-minutes {tc.max_minutes}"
            self.log(
                f"stopped after {why} (step {self.iter_num}); wrote {tc.out}; "
                f"resume with: nilmbuild train --resume {resume_path(tc.out)}"
            )

    def run(self) -> dict:
        """Train to tc.epochs (or a stop rule) -> {"out", "resume", "train_log", "model", "step"}."""
        tc, start_epoch, stopped = self.tc, self.epoch, None
        t_start = time.perf_counter()
        try:
            for epoch in range(start_epoch, tc.epochs):
                self.epoch = epoch
                stopped = self.run_epoch(epoch, self.batch if epoch == start_epoch else 0, t_start)
                if stopped:
                    break
                self.end_epoch(epoch)
        except KeyboardInterrupt:
            self.save_resume(self.epoch, self.batch, self.acc)
            if self.is_main:
                self.log(
                    f"\ninterrupted at epoch {self.epoch + 1}, step {self.iter_num}: resumable state saved to "
                    f"{resume_path(tc.out)}\nresume with:  nilmbuild train --resume {resume_path(tc.out)}\n"
                    f"{tc.out} holds the best epoch so far with its gate thresholds not yet calibrated (that runs "
                    f"at the end of a run); to use it as it is:  nilmbuild calibrate {tc.out}"
                )
            raise Interrupted() from None
        self.group.finish(self.model)
        if stopped:
            self.end_stopped(stopped)
        else:
            self.save(calibrate=True)
            if self.is_main:
                best = self.best["epoch"] + 1 if self.best["epoch"] is not None else "-"
                self.log(f"wrote {tc.out} (best epoch {best}) and {resume_path(tc.out)}")
        return {
            "out": tc.out,
            "resume": resume_path(tc.out),
            "train_log": self.train_log,
            "model": self.model,
            "step": self.iter_num,
        }


def train(tc: TrainConfig, log=print, group=None) -> dict:
    """Run (or resume) training; writes tc.out (best weights) and tc.out + '.resume.pt' (resumable state).
    group: a nilmbuild.train.ddp.ProcessGroup under DDP (None: one process).
    Returns {"out", "resume", "train_log", "model", "step"}."""
    return Trainer(tc, log, group).run()


def resume_path(out: str) -> str:
    return str(out)[:-3] + ".resume.pt" if str(out).endswith(".pt") else str(out) + ".resume.pt"


def _tc_dict(tc: TrainConfig) -> dict:
    d = asdict(tc)
    d["devices"] = list(tc.devices) if tc.devices else None
    return d


def _bar(tc, is_main, total, initial, epoch):
    if not (tc.progress and is_main):
        return None
    from tqdm import tqdm

    return tqdm(
        total=total,
        initial=initial,
        desc=f"epoch {epoch + 1}/{tc.epochs}",
        unit="step",
        leave=True,
        dynamic_ncols=True,
        file=sys.stderr,
    )


def _epoch_line(rec, base) -> str:
    s = f"epoch {rec['epoch']}: train loss {rec['loss']['total']:.4f}  {rec['step_time_s']:.1f} s/step"
    if rec["pcgrad"]["enabled"]:
        s += f"  pcgrad projections/step {rec['pcgrad']['projections_per_step']:.2f}"
    v = rec.get("val") or {}
    if v:
        s += f"  val loss {v['loss']:.4f}\n" + "\n".join(
            f"  {d:<16} MAE {m['mae'] if m['mae'] is not None else float('nan'):7.1f} W (mean {base.get(d, {}).get('mae') or float('nan'):6.1f})"
            f"  F1 {m['f1'] if m['f1'] is not None else float('nan'):.3f} (mean {base.get(d, {}).get('f1') or 0.0:.3f})"
            for d, m in v["devices"].items()
        )
    return s


def recalibrate(path: str, batch_size: int = 32) -> dict:
    """Re-run the gate calibration on an existing checkpoint (same data and split as its provenance) and
    rewrite it in place (atomically). `nilmbuild calibrate` calls it."""
    from nilmbuild.pipeline import load_data_for

    ck = load_checkpoint(path)
    prepared = load_data_for(ck)
    cal = calibrate_gates(ck.model, prepared, batch_size)
    apply_thresholds(ck.model, {d: c["threshold"] for d, c in cal.items()})
    log = dict(ck.train_log)
    log["gate_calibration"] = cal
    save_checkpoint(path, ck.model, scalers=ck.scalers, train_log=log, provenance=ck.provenance, extra=ck.extra)
    return cal

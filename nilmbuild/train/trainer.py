"""The training loop (architecture.md 10.4): data -> device types -> the model -> AdamW with the multi-task
loss, optional PCGrad, warm-up then event-biased multi-crop, anti-collapse and output-stats schedules,
validation each epoch, best checkpoint by validation loss, resumable checkpoints, optional DDP.

The loop itself; each of its other jobs has its own module: config.py (TrainConfig), data.py (the run's windows),
schedule.py (learning rate and recipe per epoch), validation.py, epoch_log.py (what an epoch adds up),
resume.py (RunState, read_resume), calibrate.py (gate thresholds, recalibrate). `build_model` is the one place
that names an architecture.

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

import torch
from torch.utils.data.distributed import DistributedSampler

from nilmbuild.errors import UserError
from nilmbuild.model.checkpoint import save_checkpoint
from nilmbuild.model.config import NILMFormerConfig
from nilmbuild.model.nilmformer import NILMFormer
from nilmbuild.pipeline import training_provenance

from .calibrate import apply_thresholds, calibrate_gates
from .config import TrainConfig, config_dict, resolve_device
from .crops import sample_crops, take_crops
from .data import load_prepared, tensors
from .device_types import classify_prepared, device_specs
from .epoch_log import Accumulator, epoch_line
from .losses import COMPONENTS, LossWeights, device_losses, loss_components, uncertainty_weighted, weight_matrix
from .pcgrad import pcgrad_backward
from .resume import RunState, read_resume, resume_path
from .schedule import lr_factor, schedule
from .trajectory import append_epoch, trajectory_path
from .validation import rounded, val_baseline, validate
from .windows import TrainSeries

__all__ = ["Interrupted", "SingleProcess", "TrainConfig", "Trainer", "resume_path", "train"]


def build_model(tc: TrainConfig, classification: dict, devices: list[str]) -> NILMFormer:
    """The run's model: tc.model's config overrides, one head per device typed by `classification`, initialised
    after torch.manual_seed(tc.seed). The one place the loop names an architecture."""
    cfg = NILMFormerConfig(**{**tc.model, "devices": device_specs({d: classification[d] for d in devices})})
    torch.manual_seed(tc.seed)
    return NILMFormer(cfg)


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
        self.provenance = training_provenance(self.prepared, **tc.data_settings(), command=tc.command)
        self.extra = {"device_types": self.classification, "train_config": config_dict(tc)}

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
        self.model = build_model(tc, self.classification, devs)
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
            train_config=config_dict(self.tc),
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
                "best_val_loss": rounded(self.best["val_loss"]) if found else None,
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
            self.log(epoch_line(rec, self.train_log.get("baseline_val", {})))
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

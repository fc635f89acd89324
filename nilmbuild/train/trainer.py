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
import shlex
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from torch.utils.data.distributed import DistributedSampler

from nilmbuild import __version__
from nilmbuild.data.loaders import default_unit
from nilmbuild.errors import UserError
from nilmbuild.model.checkpoint import load_checkpoint, save_checkpoint
from nilmbuild.model.config import NILMFormerConfig
from nilmbuild.model.nilmformer import NILMFormer

from .calibrate import apply_thresholds, calibrate_gates
from .crops import sample_crops, take_crops
from .device_types import classify_prepared, device_specs
from .losses import COMPONENTS, LossWeights, device_losses, loss_components, long_off_mask, uncertainty_weighted, weight_matrix
from .pcgrad import pcgrad_backward
from .windows import TrainSeries

BASE_COMPONENTS = tuple(c for c in COMPONENTS if c not in ("anti_collapse", "out_stats"))


@dataclass
class TrainConfig:
    source: str = "synthetic"
    house: int | None = None
    days: int = 60                       # simulator only
    seed: int = 0
    epochs: int = 10
    batch_size: int = 16                 # per process under DDP
    lr: float = 2e-3                     # peak; warm-up + cosine (lr_factor)
    weight_decay: float = 1e-2
    grad_clip: float = 1.0
    pcgrad: bool = True
    pcgrad_from_epoch: int | None = 0    # plain summed loss before this epoch (0-based), PCGrad from it on;
                                         # None -> the last quarter of the epochs
    max_minutes: float | None = None     # stop (resumable, best checkpoint written) after this wall time
    warmup_epochs: int | None = None     # None -> max(1, epochs // 4)
    val_from: str | None = None
    test_from: str | None = None
    devices: tuple[str, ...] | None = None   # None -> every device the source has a channel for
    out: str = "runs/model.pt"
    resume: str | None = None
    max_steps: int | None = None
    threads: int = 2
    model: dict = field(default_factory=dict)   # NILMFormerConfig overrides (tests use a tiny model)
    prep: dict = field(default_factory=dict)    # PrepConfig overrides (stride, fractions, ...)
    progress: bool = True
    command: str = ""
    device: str = "auto"                 # auto | cpu | cuda (bf16 autocast on cuda)
    crop_len: int | None = None          # after warm-up, crops of this many steps; None -> window // 2, 0 -> no crops
    random_offsets: bool = True          # fresh random window offsets every epoch (False: prepare()'s stride grid)
    windows_per_epoch: int | None = None # with random offsets: windows drawn per epoch (None: as many as the grid has)
    loss_weighting: str = "fixed"        # fixed (device-type weights) | uncertainty (learned, Kendall et al. 2018)
    lr_warmup_frac: float = 0.05         # linear learning-rate warm-up over this share of the steps, then cosine
    lr_min_ratio: float = 0.05           # ... down to lr * lr_min_ratio at the last step
    scaler: str = "max"                  # aggregate scaler (architecture.md 2.2); appliance targets stay max-scaled

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
    from nilmbuild.data.household import DEVICE_NAMES
    from nilmbuild.data.loaders import load_source
    from nilmbuild.data.preprocess import PrepConfig, prepare

    hh = load_source(tc.source, house=tc.house, days=tc.days, seed=tc.seed)
    devs = tuple(tc.devices) if tc.devices else tuple(d for d in DEVICE_NAMES if d in hh.appliances)
    unknown = [d for d in devs if d not in DEVICE_NAMES]
    if unknown:
        raise UserError(f"unknown device(s) {', '.join(unknown)}; use some of {', '.join(DEVICE_NAMES)}")
    if not devs:
        raise UserError(f"{tc.source}: no appliance channel to train on")
    kw = {"window": window, "stride": window // 2, "devices": devs, "val_from": tc.val_from, "test_from": tc.test_from,
          "scaler": tc.scaler, "appliance_scaler": "max"}
    kw.update(tc.prep)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prepared = prepare(hh, PrepConfig(**kw))
    if prepared.train.x.shape[0] == 0:
        raise UserError(f"{tc.source}: the train split has no {window}-step windows; use more data (--days) or other split dates")
    return prepared


def tensors(split, long_off_steps) -> dict:
    y = torch.from_numpy(split.y)                                           # (N, D, 2, L)
    st = split.y[:, :, 1]
    return {"x": torch.from_numpy(split.x), "y": y[:, :, 0].contiguous(), "s": y[:, :, 1].contiguous(),
            "lo": torch.from_numpy(long_off_mask(st, long_off_steps)) if st.size else torch.zeros(st.shape)}


# ---- distributed helpers ---------------------------------------------------------------------------

def _dist():
    import torch.distributed as dist
    if dist.is_available() and dist.is_initialized():
        return dist, dist.get_rank(), dist.get_world_size()
    return None, 0, 1


def _allreduce_grads(params, dist, world):
    for p in params:
        if p.grad is not None:
            dist.all_reduce(p.grad)
            p.grad /= world


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
        soft = model(x, gate_mode="soft")                                  # the loss: threshold-free, as trained
        out = model(x)                                                      # MAE / F1: the hard gate, as at inference
        c = loss_components(soft.power, soft.gate_logit, *(data[k][sl].to(dev) for k in ("y", "s")), None, data["lo"][sl].to(dev), pos_weight)
        n = out.power.shape[0]
        sums = {k: (sums[k] if sums else 0) + v.cpu() * n for k, v in c.items() if k in BASE_COMPONENTS}
        preds.append(out.power.float().cpu())
    model.train(was)
    comps = {k: v / N for k, v in sums.items()}
    per_dev = sum(wm[k] * v for k, v in comps.items())
    devs = list(prepared.devices)
    P = torch.cat(preds).numpy()                                            # (N, D, L)
    yw = np.stack([scaler_from_dict(prepared.scalers["appliances"][d]).inverse(data["y"][:, i].numpy()).ravel() for i, d in enumerate(devs)])
    pw = np.stack([np.clip(scaler_from_dict(prepared.scalers["appliances"][d]).inverse(P[:, i]).ravel(), 0, None) for i, d in enumerate(devs)])
    st = data["s"].numpy().transpose(1, 0, 2).reshape(len(devs), -1)
    m = all_metrics(devs, yw, pw, st, prepared.thresholds_w)
    return {"loss": float(per_dev.sum()), "loss_per_device": {d: float(per_dev[i]) for i, d in enumerate(devs)},
            "devices": {d: {"mae": _f(m[d]["mae"]), "f1": _f(m[d]["f1"])} for d in devs}}


def val_baseline(data, prepared) -> dict:
    """Mean-per-appliance baseline on the validation windows (train-split mean power)."""
    from nilmbuild.data.preprocess import scaler_from_dict
    from nilmbuild.infer.metrics import mean_baseline

    devs = list(prepared.devices)
    if data["x"].shape[0] == 0:
        return {}
    tr = prepared.train
    means = {d: float(tr.appliances_w[i][tr.valid].mean()) for i, d in enumerate(devs)}
    yw = np.stack([scaler_from_dict(prepared.scalers["appliances"][d]).inverse(data["y"][:, i].numpy()).ravel() for i, d in enumerate(devs)])
    st = data["s"].numpy().transpose(1, 0, 2).reshape(len(devs), -1)
    m = mean_baseline(devs, yw, st, prepared.thresholds_w, means)
    return {d: {"mae": _f(m[d]["mae"]), "f1": _f(m[d]["f1"]), "mean_w": means[d]} for d in devs}


def _f(v) -> float | None:
    v = float(v)
    return round(v, 6) if math.isfinite(v) else None


# ---- the loop --------------------------------------------------------------------------------------

class Interrupted(Exception):
    pass


def train(tc: TrainConfig, log=print) -> dict:
    """Run (or resume) training; writes tc.out (best weights) and tc.out + '.resume.pt' (resumable state).
    Returns {"out", "resume", "train_log", "model"}."""
    torch.set_num_threads(max(1, tc.threads))
    device = resolve_device(tc.device)
    if tc.loss_weighting not in ("fixed", "uncertainty"):
        raise UserError(f"unknown loss weighting {tc.loss_weighting!r}; use fixed or uncertainty")
    dist, rank, world = _dist()
    is_main = rank == 0
    resume = None
    if tc.resume:
        loaded = load_checkpoint(tc.resume)
        resume = loaded.extra.get("resume")
        if not resume:
            raise UserError(f"{tc.resume} has no resume state: pass the '.resume.pt' file written next to --out")
        saved = resume["train_config"]
        keep = {"resume": tc.resume, "max_steps": tc.max_steps, "max_minutes": tc.max_minutes, "progress": tc.progress, "threads": tc.threads, "command": tc.command}
        if tc.epochs != saved["epochs"]:
            keep["epochs"] = tc.epochs
        tc = TrainConfig(**{**saved, **keep, "devices": tuple(saved["devices"]) if saved.get("devices") else None})

    base_cfg = NILMFormerConfig(**tc.model)
    prepared = load_prepared(tc, base_cfg.window)
    classification = resume["classification"] if resume else classify_prepared(prepared)
    devs = list(prepared.devices)
    cfg = NILMFormerConfig(**{**tc.model, "devices": device_specs({d: classification[d] for d in devs})})
    weights = [LossWeights(**classification[d]["weights"]) for d in devs]
    pos_weight = torch.tensor([w.pos_weight for w in weights])
    lo_steps = [w.long_off_steps for w in weights]
    tr, va = tensors(prepared.train, lo_steps), tensors(prepared.val, lo_steps)

    torch.manual_seed(tc.seed)
    model = NILMFormer(cfg)
    if resume:
        model.load_state_dict(loaded.model.state_dict())
    model.to(device).train()
    net = model
    if dist is not None:
        from torch.nn.parallel import DistributedDataParallel
        net = DistributedDataParallel(model)
    shared = [p for n, p in model.named_parameters() if not n.startswith("heads.")]
    own = [list(model.heads[d].parameters()) for d in devs]
    # uncertainty weighting (Kendall, Gal & Cipolla 2018): task loss exp(-s_i) L_i + s_i, s_i = log sigma_i^2 learned
    log_vars = torch.zeros(len(devs), device=device, requires_grad=True) if tc.loss_weighting == "uncertainty" else None
    groups = [{"params": list(model.parameters())}] + ([{"params": [log_vars], "weight_decay": 0.0}] if log_vars is not None else [])
    opt = torch.optim.AdamW(groups, lr=tc.lr, weight_decay=tc.weight_decay)
    autocast = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if device.type == "cuda" else _null

    series = TrainSeries(prepared, lo_steps, base_cfg.window) if tc.random_offsets else None
    N = int(tc.windows_per_epoch) if (series is not None and tc.windows_per_epoch) else tr["x"].shape[0]
    crop_len = base_cfg.window // 2 if tc.crop_len is None else int(tc.crop_len)
    sampler = DistributedSampler(range(N), num_replicas=world, rank=rank, shuffle=True, seed=tc.seed)
    steps_per_epoch = math.ceil(len(sampler) / tc.batch_size)
    total_steps = tc.epochs * steps_per_epoch
    warmup = tc.warmup()
    train_log = {"epochs": [], "devices": devs, "components": list(COMPONENTS), "steps_per_epoch": steps_per_epoch,
                 "pcgrad": tc.pcgrad, "world_size": world, "warmup_epochs": warmup}
    start_epoch, start_batch, step = 0, 0, 0
    best = {"val_loss": float("inf"), "epoch": None, "state": None}
    acc = None
    if resume:
        opt.load_state_dict(resume["optimizer"])
        start_epoch, start_batch, step = resume["epoch"], resume["batch"], resume["step"]
        train_log = resume["train_log"]
        best = {"val_loss": resume["best_val_loss"], "epoch": resume["best_epoch"], "state": resume["best_state"]}
        acc = resume.get("acc")
        torch.set_rng_state(resume["rng"])
        if log_vars is not None and resume.get("log_vars") is not None:
            with torch.no_grad():
                log_vars.copy_(torch.tensor(resume["log_vars"]))
    if "baseline_val" not in train_log and is_main:
        train_log["baseline_val"] = val_baseline(va, prepared)

    provenance = {
        "source": tc.source, "house": tc.house, "days": tc.days if tc.source == "synthetic" else None, "seed": tc.seed,
        "columns": None, "unit": default_unit.get(), "prep": prepared.config, "span": prepared.stats.get("span"),
        "unknown_columns": prepared.meta.get("unknown_columns") or [],
        "splits": {s: ([str(sp.timestamps[0]), str(sp.timestamps[-1])] if sp.timestamps.size else None)
                   for s, sp in prepared.splits.items()},
        "windows": prepared.stats.get("windows"), "dataset": prepared.meta.get("dataset"),
        "command": tc.command or " ".join(shlex.quote(a) for a in sys.argv), "nilmbuild_version": __version__,
    }
    extra = {"device_types": classification, "train_config": _tc_dict(tc)}

    def save_resume(epoch, batch, acc_now):
        if not is_main:
            return
        state = {"optimizer": opt.state_dict(), "epoch": epoch, "batch": batch, "step": step, "rng": torch.get_rng_state(),
                 "train_log": train_log, "best_val_loss": best["val_loss"], "best_epoch": best["epoch"],
                 "best_state": best["state"], "acc": acc_now, "classification": classification, "train_config": _tc_dict(tc),
                 "log_vars": log_vars.detach().cpu().tolist() if log_vars is not None else None}
        save_checkpoint(resume_path(tc.out), model, scalers=prepared.scalers, train_log=train_log,
                        provenance=provenance, extra={**extra, "resume": state})

    def save_final(calibrate: bool = False):
        if not is_main:
            return
        final = copy.deepcopy(model).cpu()
        if best["state"] is not None:
            final.load_state_dict(best["state"])
        if calibrate:
            cal = calibrate_gates(final, prepared, tc.batch_size)
            apply_thresholds(final, {d: c["threshold"] for d, c in cal.items()})
            train_log["gate_calibration"] = cal
        save_checkpoint(tc.out, final, scalers=prepared.scalers, train_log=train_log, provenance=provenance,
                        extra={**extra, "best_epoch": (best["epoch"] + 1) if best["epoch"] is not None else None, "best_val_loss": _f(best["val_loss"]) if best["epoch"] is not None else None})

    stopped = None
    t_start = time.perf_counter()
    epoch, b = start_epoch, start_batch
    try:
        for epoch in range(start_epoch, tc.epochs):
            sampler.set_epoch(epoch)
            order = torch.tensor(list(iter(sampler)))
            data = series.draw(N, tc.seed * 1_000_003 + epoch) if series is not None else tr
            if acc is None or epoch != start_epoch or start_batch == 0:
                acc = {"comps": {k: [0.0] * len(devs) for k in COMPONENTS}, "dev_loss": [0.0] * len(devs), "total": 0.0,
                       "cos": [[0.0] * len(devs) for _ in devs], "proj": 0, "steps": 0, "time": 0.0, "pcgrad": 0}
            first = start_batch if epoch == start_epoch else 0
            bar = _bar(tc, is_main, steps_per_epoch, first, epoch)
            for b in range(first, steps_per_epoch):
                if tc.max_steps is not None and step >= tc.max_steps:
                    stopped = "max_steps"
                    break
                if tc.max_minutes is not None and time.perf_counter() - t_start > 60 * tc.max_minutes:
                    stopped = "max_minutes"
                    break
                t0 = time.perf_counter()
                idx = order[b * tc.batch_size:(b + 1) * tc.batch_size]
                sch = schedule(epoch, b / steps_per_epoch, tc.epochs, warmup)
                gen = torch.Generator().manual_seed(tc.seed * 1_000_003 + epoch * 10_007 + b)
                for g in opt.param_groups:
                    g["lr"] = tc.lr * lr_factor(step, total_steps, tc.lr_warmup_frac, tc.lr_min_ratio)
                x, y, s, lo = (data[k][idx] for k in ("x", "y", "s", "lo"))
                pos = None
                if sch["crops"] and crop_len:
                    rows, pos = sample_crops(s, gen, crop_len)
                    x, y, s, lo = (take_crops(t, rows, pos, crop_len) for t in (x, y, s, lo))
                    pos = pos.to(device)
                x, y, s, lo = (t.to(device, non_blocking=True) for t in (x, y, s, lo))
                opt.zero_grad(set_to_none=True)
                use_pcgrad = tc.pcgrad and len(devs) > 1 and epoch >= tc.pcgrad_start()
                ctx = net.no_sync() if (dist is not None and use_pcgrad) else _null()
                with ctx:
                    with autocast():
                        out = net(x, pos_start=pos)
                    comps = loss_components(out.power.float(), out.gate_logit.float(), y, s, None, lo, pos_weight)
                    losses = device_losses(comps, weight_matrix(weights, sch["anti_collapse"], sch["out_stats_alpha"]))
                    task = losses if log_vars is None else uncertainty_weighted(losses, log_vars)
                    total = task.sum()
                    if use_pcgrad:
                        cos, nproj = pcgrad_backward(task, shared, own, gen)
                        if log_vars is not None:       # d task_i / d s_i = 1 - exp(-s_i) L_i (heads of no other task)
                            log_vars.grad = (1.0 - torch.exp(-log_vars) * losses).detach()
                    else:
                        total.backward()
                        cos, nproj = None, 0
                if dist is not None and use_pcgrad:
                    _allreduce_grads(model.parameters(), dist, world)
                if tc.grad_clip:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), tc.grad_clip)
                opt.step()
                step += 1
                dt = time.perf_counter() - t0
                acc["steps"] += 1
                acc["time"] += dt
                acc["total"] += float(total.detach())
                acc["proj"] += nproj
                for k, v in comps.items():
                    acc["comps"][k] = [a + float(u) for a, u in zip(acc["comps"][k], v.detach())]
                acc["dev_loss"] = [a + float(u) for a, u in zip(acc["dev_loss"], losses.detach())]
                if cos is not None:
                    acc["pcgrad"] = acc.get("pcgrad", 0) + 1
                    acc["cos"] = [[a + float(u) for a, u in zip(ra, ru)] for ra, ru in zip(acc["cos"], cos)]
                if bar is not None:
                    bar.set_postfix(loss=f"{float(total.detach()):.4f}", proj=nproj, s_step=f"{dt:.1f}")
                    bar.update(1)
            else:
                b = steps_per_epoch
            if bar is not None:
                bar.close()
            if stopped:
                break
            # end of epoch: log, validate, keep the best, write the resumable state
            rec = _epoch_record(epoch, acc, devs, sch, tc, opt)
            if log_vars is not None:
                rec["task_weights"] = {d: round(float(torch.exp(-log_vars[i])), 5) for i, d in enumerate(devs)}
            if is_main:
                v = validate(model, va, weights, prepared, pos_weight, tc.batch_size)
                rec["val"] = v
                vl = v.get("loss", rec["loss"]["total"])
                if vl < best["val_loss"]:
                    best = {"val_loss": vl, "epoch": epoch, "state": {k: t.detach().clone() for k, t in model.state_dict().items()}}
                train_log["epochs"].append(rec)
                log(_epoch_line(rec, train_log.get("baseline_val", {})))
            acc = None
            save_resume(epoch + 1, 0, None)
            save_final()
            start_batch = 0
    except KeyboardInterrupt:
        save_resume(epoch, b, acc)
        if is_main:
            log(f"\ninterrupted at epoch {epoch + 1}, step {step}: resumable state saved to {resume_path(tc.out)}\n"
                f"resume with:  nilmbuild train --resume {resume_path(tc.out)}")
        raise Interrupted() from None
    if dist is not None:                   # BatchNorm running stats: every rank ends with rank 0's
        for buf in model.buffers():
            dist.broadcast(buf, 0)
    if stopped:
        if is_main and acc is not None and acc["steps"] > 0:   # the partial epoch's weights may be the best
            v = validate(model, va, weights, prepared, pos_weight, tc.batch_size)
            train_log.setdefault("partial", []).append({"epoch": epoch + 1, "step": step, "val": v})
            if v and v["loss"] < best["val_loss"]:
                best = {"val_loss": v["loss"], "epoch": epoch, "state": {k: t.detach().clone() for k, t in model.state_dict().items()}}
        save_resume(epoch, b, acc)
        save_final(calibrate=True)
        if is_main:
            why = f"--max-steps {tc.max_steps}" if stopped == "max_steps" else f"--max-minutes {tc.max_minutes}"
            log(f"stopped after {why} (step {step}); wrote {tc.out}; resume with: nilmbuild train --resume {resume_path(tc.out)}")
    if not stopped:
        save_final(calibrate=True)
    if is_main and not stopped:
        log(f"wrote {tc.out} (best epoch {best['epoch'] + 1 if best['epoch'] is not None else '-'}) and {resume_path(tc.out)}")
    return {"out": tc.out, "resume": resume_path(tc.out), "train_log": train_log, "model": model, "step": step}


def resume_path(out: str) -> str:
    return str(out)[:-3] + ".resume.pt" if str(out).endswith(".pt") else str(out) + ".resume.pt"


def _tc_dict(tc: TrainConfig) -> dict:
    d = asdict(tc)
    d["devices"] = list(tc.devices) if tc.devices else None
    return d


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def _bar(tc, is_main, total, initial, epoch):
    if not (tc.progress and is_main):
        return None
    from tqdm import tqdm
    return tqdm(total=total, initial=initial, desc=f"epoch {epoch + 1}/{tc.epochs}", unit="step", leave=True,
                dynamic_ncols=True, file=sys.stderr)


def _epoch_record(epoch, acc, devs, sch, tc, opt) -> dict:
    n = max(1, acc["steps"])
    comps = {d: {k: round(acc["comps"][k][i] / n, 6) for k in COMPONENTS} for i, d in enumerate(devs)}
    for i, d in enumerate(devs):
        comps[d]["total"] = round(acc["dev_loss"][i] / n, 6)
    npc = max(1, acc.get("pcgrad", 0))
    pairs = {f"{devs[i]}|{devs[j]}": round(acc["cos"][i][j] / npc, 4) for i in range(len(devs)) for j in range(i + 1, len(devs))}
    return {"epoch": epoch + 1, "steps": acc["steps"], "step_time_s": round(acc["time"] / n, 3), "lr": opt.param_groups[0]["lr"],
            "schedule": {k: (round(v, 4) if isinstance(v, float) else v) for k, v in sch.items()},
            "loss": {"total": round(acc["total"] / n, 6), "devices": comps},
            "pcgrad": {"enabled": bool(acc.get("pcgrad")), "mean_cos": pairs if acc.get("pcgrad") else {}, "projections": acc["proj"],
                       "projections_per_step": round(acc["proj"] / npc, 3), "pcgrad_steps": acc.get("pcgrad", 0)}}


def _epoch_line(rec, base) -> str:
    s = f"epoch {rec['epoch']}: train loss {rec['loss']['total']:.4f}  {rec['step_time_s']:.1f} s/step"
    if rec["pcgrad"]["enabled"]:
        s += f"  pcgrad projections/step {rec['pcgrad']['projections_per_step']:.2f}"
    v = rec.get("val") or {}
    if v:
        s += f"  val loss {v['loss']:.4f}\n" + "\n".join(
            f"  {d:<16} MAE {m['mae'] if m['mae'] is not None else float('nan'):7.1f} W (mean {base.get(d, {}).get('mae') or float('nan'):6.1f})"
            f"  F1 {m['f1'] if m['f1'] is not None else float('nan'):.3f} (mean {base.get(d, {}).get('f1') or 0.0:.3f})"
            for d, m in v["devices"].items())
    return s


def recalibrate(path: str, batch_size: int = 32) -> dict:
    """Re-run the gate calibration on an existing checkpoint (same data and split as its provenance) and
    rewrite it in place (atomically). `nilmbuild calibrate` calls it."""
    from nilmbuild.infer import load_data_for

    ck = load_checkpoint(path)
    prepared = load_data_for(ck)
    cal = calibrate_gates(ck.model, prepared, batch_size)
    apply_thresholds(ck.model, {d: c["threshold"] for d, c in cal.items()})
    log = dict(ck.train_log)
    log["gate_calibration"] = cal
    save_checkpoint(path, ck.model, scalers=ck.scalers, train_log=log, provenance=ck.provenance, extra=ck.extra)
    return cal

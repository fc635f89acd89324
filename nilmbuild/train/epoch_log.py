"""What an epoch adds up (Accumulator: stored in a resume state as a plain dict) and the line it prints."""

from __future__ import annotations

from .losses import COMPONENTS


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


def epoch_line(rec, base) -> str:
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

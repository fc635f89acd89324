"""Which upstream wrote this file, and where in it the model's weights are.

Two layouts are known (read in ../shared/reference/upstream/, checked by running them):

- **CondiNILM** (PyTorch Lightning, `last.ckpt`, `ckpt_epoch=NNN.ckpt`, `best_f1_epoch=NNN.ckpt`): a dict with
  `state_dict` = the LightningModule's weights, `model.<NILMFormer key>` and the loss's per-device gate
  parameters `criterion.gate_soft_scales|gate_floors|gate_biases|device_weights` (its evaluation applies them
  outside the model), plus Lightning's bookkeeping (`epoch`, `global_step`, `pytorch-lightning_version`, ...).
- **original NILMFormer** (`SeqToSeqTrainer.save`, `result/<dataset>_<appliance>_<rate>/<window>/NILMFormer_<seed>.pt`):
  the trainer's log dict, whose `best_model_state_dict` holds the model's own keys (`module.`-prefixed when it
  trained under DataParallel). `model_state_dict` is the same best-loss weights in a log saved before training
  ended, and is taken when `best_model_state_dict` is absent.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from nilmbuild.errors import UserError

CONDINILM = "condinilm-lightning"
NILMFORMER = "nilmformer-log"
#: Detected format -> the nilmbuild architecture that computes it.
ARCHITECTURE = {CONDINILM: "condinilm", NILMFORMER: "nilmformer"}
#: Wrapper prefixes around a module's own keys: DataParallel / DistributedDataParallel, torch.compile.
WRAPPERS = ("module.", "_orig_mod.")
GATE_KEYS = ("gate_soft_scales", "gate_floors", "gate_biases", "device_weights")
_LIGHTNING_META = ("epoch", "global_step", "pytorch-lightning_version")
_LOG_META = ("epoch_best_loss", "value_best_loss", "training_time")


@dataclass
class Upstream:
    """An upstream checkpoint, unpacked: its format, the model's own state_dict and (CondiNILM) the criterion's."""

    format: str
    state_dict: dict[str, torch.Tensor]
    weights_key: str  # where in the file the weights were
    criterion: dict[str, torch.Tensor] | None = None
    meta: dict = field(default_factory=dict)  # plain numbers/strings worth recording (epoch, Lightning version)

    @property
    def architecture(self) -> str:
        return ARCHITECTURE[self.format]


def detect(payload, name: str) -> Upstream:
    """The Upstream in a file's unpickled payload; a one-line UserError for any other layout."""
    if isinstance(payload, dict) and payload.get("format") == "nilmbuild-checkpoint":
        raise UserError(f"{name} is already a nilmbuild checkpoint: use it directly with `nilmbuild site -c {name}`")
    if not isinstance(payload, dict):
        raise UserError(_unknown(name, f"it holds a {type(payload).__name__}, not a dict"))
    if isinstance(payload.get("state_dict"), dict):
        return _condinilm(payload, name)
    for key in ("best_model_state_dict", "model_state_dict"):
        if isinstance(payload.get(key), dict):
            return _nilmformer(payload, key, name)
    keys = ", ".join(sorted(map(str, payload))[:8]) or "none"
    raise UserError(_unknown(name, f"its top-level keys are {keys}"))


def _unknown(name: str, why: str) -> str:
    return (
        f"{name}: unknown checkpoint layout ({why}): pass a CondiNILM Lightning .ckpt (with `state_dict`) or an "
        "original NILMFormer log .pt (with `best_model_state_dict`)"
    )


def _condinilm(payload: dict, name: str) -> Upstream:
    sd = _tensors(payload["state_dict"], name, "state_dict")
    model = _strip(_under(sd, "model."))
    if not model:
        raise UserError(
            f"{name}: its state_dict has no `model.*` keys, so it is not a CondiNILM NILMFormer checkpoint: "
            "pass the .ckpt from CondiNILM's checkpoint/<dataset>_<rate>/<window>/<appliance>/NILMFormer_<seed>/"
        )
    criterion = {k: v for k, v in _under(sd, "criterion.").items() if k in GATE_KEYS}
    meta = {k: _plain(payload[k]) for k in _LIGHTNING_META if k in payload}
    return Upstream(CONDINILM, model, "state_dict", criterion or None, meta)


def _nilmformer(payload: dict, key: str, name: str) -> Upstream:
    sd = _strip(_tensors(payload[key], name, key))
    if not sd:
        raise UserError(f"{name}: `{key}` is empty: pass the log NILMFormer_<seed>.pt written at the end of training")
    meta = {k: _plain(payload[k]) for k in _LOG_META if k in payload}
    return Upstream(NILMFORMER, sd, key, None, meta)


def _tensors(sd: dict, name: str, key: str) -> dict[str, torch.Tensor]:
    bad = [str(k) for k, v in sd.items() if not isinstance(k, str) or not isinstance(v, torch.Tensor)]
    if bad:
        raise UserError(f"{name}: `{key}` holds non-tensor entries ({', '.join(bad[:3])}): pass an unmodified file")
    return {k: v.detach().cpu() for k, v in sd.items()}


def _under(sd: dict, prefix: str) -> dict:
    return {k[len(prefix) :]: v for k, v in sd.items() if k.startswith(prefix)}


def _strip(sd: dict) -> dict:
    """Drop wrapper prefixes (DataParallel's `module.`, torch.compile's `_orig_mod.`), however nested."""
    out = {}
    for k, v in sd.items():
        while k.startswith(WRAPPERS):
            k = k.split(".", 1)[1]
        out[k] = v
    return out


def _plain(v):
    """A JSON-able copy of a small bookkeeping value (numpy/tensor scalars -> float/int)."""
    if isinstance(v, torch.Tensor) and v.numel() == 1 or isinstance(v, np.generic):
        return v.item()
    return v if isinstance(v, (int, float, str, bool)) or v is None else str(v)[:200]

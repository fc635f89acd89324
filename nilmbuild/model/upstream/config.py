"""The validated configuration of an upstream architecture (CondiNILM or the original NILMFormer).

One dataclass for both: every field is a named difference from the spec's model (nilmbuild/model/config.py) or a
size. `from_upstream` reads it from the configuration dict the upstream code itself uses (CondiNILM's
experiment_config.json; the original's resolved configs/*.yaml + command line); `upstream` keeps that dict whole,
so a checkpoint records the full upstream configuration.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from nilmbuild.errors import UserError

ARCHITECTURES = ("condinilm", "nilmformer")
EXO_VARIABLES = ("minute", "hour", "dow", "dom", "month")


@dataclass
class UpstreamConfig:
    arch: str  # "condinilm" | "nilmformer"
    window: int  # L: time steps per window (the stats token makes L + 1 tokens)
    devices: tuple[str, ...]  # output channels in the config's `app` order
    d_model: int = 96  # stem: 3 d_model / 4 dilated-conv channels + d_model / 4 time-feature channels
    n_head: int = 8
    n_encoder_layers: int = 3
    pffn_ratio: int = 4
    kernel_size: int = 3  # DilatedBlock kernel
    kernel_size_head: int = 3  # CondiNILM SharedHead / original DownstreamTaskHead kernel (replicate padding)
    dilations: tuple[int, ...] = (1, 2, 4, 8)
    conv_bias: bool = True
    norm_eps: float = 1e-5
    dp_rate: float = 0.2
    exo_variables: tuple[str, ...] = ("minute", "hour", "dow", "month")  # each one sin + cos channel
    step_s: int = 60  # sampling rate in seconds (the time features step by it)
    mask_diagonal: bool = True
    inst_norm_min_std: float = 0.0  # instance-norm std clamp (CondiNILM 1e-2; the original none: 0)
    # CondiNILM only
    use_film: bool = False
    film_hidden_dim: int = 32
    use_elec_features: bool = True
    use_freq_features: bool = True
    type_ids_per_channel: tuple[int, ...] | None = None  # shared power/gate heads per device group
    sparse_indices: tuple[int, ...] = ()  # devices whose output is the sparse CNN on the raw aggregate (kettle)
    gate_logits_floors: tuple[float, ...] = ()  # per device, -inf: none (sparse_high_power devices: -3)
    gate_source: str = "none"  # "criterion": per-device criterion.gate_*; "config": gate_soft_scale/gate_floor
    gate_soft_scale: float = 1.0  # gate_source "config" only
    gate_floor: float = 0.0  # gate_source "config" only
    upstream: dict = field(default_factory=dict)  # the upstream configuration, whole

    def __post_init__(self) -> None:
        self.devices = tuple(str(d) for d in self.devices)
        self.dilations = tuple(int(d) for d in self.dilations)
        self.exo_variables = tuple(self.exo_variables)
        self.sparse_indices = tuple(int(i) for i in self.sparse_indices)
        self.gate_logits_floors = tuple(float(f) for f in self.gate_logits_floors)
        if self.type_ids_per_channel is not None:
            self.type_ids_per_channel = tuple(int(t) for t in self.type_ids_per_channel)
        self.validate()

    def validate(self) -> None:
        """One-line UserError for a configuration no model can be built from."""
        _check(self.arch in ARCHITECTURES, f"unknown architecture {self.arch!r}: use one of {ARCHITECTURES}")
        _check(len(self.devices) >= 1, "the config names no device: set `app`")
        _check(self.window >= 2, f"window_size {self.window} is too short")
        _check(self.d_model % 4 == 0, f"d_model {self.d_model} must be divisible by 4")
        _check(
            self.n_head >= 1 and self.d_model % self.n_head == 0,
            f"d_model {self.d_model} is not divisible by n_head {self.n_head}",
        )
        bad = [v for v in self.exo_variables if v not in EXO_VARIABLES]
        _check(not bad, f"unknown list_exo_variables {bad}: use some of {EXO_VARIABLES}")
        _check(all(0 <= i < self.c_out for i in self.sparse_indices), "a sparse device index is out of range")
        _check(len(self.sparse_indices) <= 2, "CondiNILM's sparse CNN has two device heads: at most 2 sparse devices")
        if self.type_ids_per_channel is not None:
            _check(len(self.type_ids_per_channel) == self.c_out, "type_ids_per_channel needs one id per device")
        if self.arch == "condinilm":
            _check(len(self.gate_logits_floors) in (0, self.c_out), "gate_logits_floors needs one value per device")
            _check(
                not self.use_film or self.use_elec_features or self.use_freq_features,
                "FiLM needs electrical or frequency condition features",
            )

    @property
    def c_out(self) -> int:
        return len(self.devices)

    @property
    def device_names(self) -> list[str]:
        return list(self.devices)

    @property
    def c_embedding(self) -> int:
        """Time-feature channels: sin and cos of each exo variable (8 for minute, hour, dow, month)."""
        return 2 * len(self.exo_variables)

    @property
    def n_channels(self) -> int:
        """Model input channels: power + time features."""
        return 1 + self.c_embedding

    @property
    def d_stem(self) -> int:
        return 3 * self.d_model // 4

    @property
    def d_time(self) -> int:
        return self.d_model // 4

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_head

    @property
    def d_ff(self) -> int:
        return self.d_model * self.pffn_ratio

    @property
    def n_cond(self) -> int:
        return 5 * self.use_elec_features + 8 * self.use_freq_features

    def to_dict(self) -> dict:
        d = asdict(self)
        d["gate_logits_floors"] = [float(f) for f in self.gate_logits_floors]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> UpstreamConfig:
        return cls(**d)


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise UserError(message)

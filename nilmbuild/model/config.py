"""NILMFormer configuration: the spec defaults (architecture.md section 4.1) plus the per-device list."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

HeadKind = Literal["sparse", "regular"]


@dataclass(frozen=True)
class DeviceSpec:
    """One target appliance: its output channel, head kind and inference gate threshold.

    head "sparse"  -> SparseDeviceCNN (kettle, microwave: rare, high-power, two-state)
    head "regular" -> SimpleDeviceHead (fridge, dishwasher, washing machine)
    gate_threshold is on the gate probability in [0, 1] (see docs/spec-notes.md, "gate scale").
    """

    name: str
    head: HeadKind = "regular"
    gate_threshold: float = 0.5


DEFAULT_DEVICES: tuple[DeviceSpec, ...] = (
    DeviceSpec("kettle", "sparse"),
    DeviceSpec("microwave", "sparse"),
    DeviceSpec("fridge", "regular"),
    DeviceSpec("dishwasher", "regular"),
    DeviceSpec("washing_machine", "regular"),
)


@dataclass
class NILMFormerConfig:
    c_in: int = 1  # power channels (the aggregate)
    n_exo: int = 6  # exogenous sin/cos channels: month, day-of-year, hour
    c_embedding: int = 8  # DilatedBlock output channels
    kernel_size: int = 3
    dilations: tuple[int, ...] = (1, 2, 4, 8)
    n_encoder_layers: int = 3
    d_model: int = 96
    n_head: int = 8
    head_dim: int = 12  # d_model // n_head
    pffn_ratio: int = 4  # FFN 96 -> 384 -> 96
    dp_rate: float = 0.2  # dropout on the residual branches and inside the FFN (spec)
    attn_dropout: float = 0.0  # dropout on the attention weights (spec: dp_rate; see docs/spec-notes.md)
    mask_diagonal: bool = True
    use_film: bool = True
    film_hidden_dim: int = 32
    use_freq_features: bool = True
    use_elec_features: bool = True
    n_freq_bands: int = 8
    window: int = 480  # L; the learnable positional encoding is (1, c_embedding, window)
    devices: tuple[DeviceSpec, ...] = field(default_factory=lambda: DEFAULT_DEVICES)

    def __post_init__(self) -> None:
        self.dilations = tuple(self.dilations)
        self.devices = tuple(d if isinstance(d, DeviceSpec) else DeviceSpec(**d) for d in self.devices)
        if self.n_head * self.head_dim != self.d_model:
            raise ValueError(
                f"n_head * head_dim must equal d_model ({self.n_head} x {self.head_dim} != {self.d_model})"
            )

    @property
    def c_out(self) -> int:
        return len(self.devices)

    @property
    def n_channels(self) -> int:
        """Model input channels: power + exogenous (7 by default)."""
        return self.c_in + self.n_exo

    @property
    def d_ff(self) -> int:
        return self.d_model * self.pffn_ratio

    @property
    def n_cond(self) -> int:
        """Condition-vector width: 5 electrical + 8 frequency-band features (13 by default)."""
        return 5 * self.use_elec_features + self.n_freq_bands * self.use_freq_features

    @property
    def device_names(self) -> list[str]:
        return [d.name for d in self.devices]

    def to_dict(self) -> dict:
        d = asdict(self)
        d["dilations"] = list(self.dilations)
        d["devices"] = [asdict(x) for x in self.devices]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> NILMFormerConfig:
        return cls(**d)

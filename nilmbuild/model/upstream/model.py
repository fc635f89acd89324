"""UpstreamNILMFormer: CondiNILM's and the original NILMFormer's forward pass on the spec's shared trunk.

Shared with the spec's model: the DilatedBlock (embedding.py, residual "upstream"), the encoder layer
(encoder.py, residual_from "normalised"), its attention and FFN, the condition features (film.py, bands
"floor") and both FiLM generators. Each difference is one module here: stem.py (instance norm of the power
channel, time-feature projection, stats token), shared_head.py and sparse_cnn.py and soft_gate.py (CondiNILM),
conv_head.py (the original).

forward(x) -> UpstreamOutput in scaled units; `power` is what the upstream's own evaluation turns into watts
(CondiNILM: after its external soft gate; the original: after its learned de-normalisation).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ..encoder import EncoderLayer
from ..film import DecoderFiLM, EncoderFiLM, condition_features
from ..trace import Trace, put
from .config import UpstreamConfig
from .conv_head import ConvHead
from .shared_head import SharedHeadBlock
from .soft_gate import SoftGate
from .sparse_cnn import SparseCNN
from .stem import UpstreamStem
from .whatif import UpstreamWhatIf, film_scaled, mask_flag

AX_BDL = ("batch", "device", "time")


@dataclass
class UpstreamOutput:
    power: torch.Tensor  # (B, D, L) what the evaluation inverse-scales (scaled units)
    power_ungated: torch.Tensor  # (B, D, L) CondiNILM: before its soft gate; the original: = power
    gate: torch.Tensor | None  # (B, D, L) gate probability (CondiNILM), None (the original has no gate)
    gate_logit: torch.Tensor | None  # (B, D, L)


class UpstreamNILMFormer(nn.Module):
    def __init__(self, cfg: UpstreamConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.stem = UpstreamStem(cfg)
        self.encoder_layers = nn.ModuleList(
            EncoderLayer(cfg.d_model, cfg.n_head, cfg.head_dim, cfg.d_ff, cfg.dp_rate, None, "normalised", cfg.norm_eps)
            for _ in range(cfg.n_encoder_layers)
        )
        self.final_norm = nn.LayerNorm(cfg.d_model)
        self.ProjStats2 = nn.Linear(cfg.d_model, 2)
        if cfg.arch == "nilmformer":
            self.head = ConvHead(cfg)
            return
        if cfg.use_film:
            self.encoder_film = EncoderFiLM(
                cfg.c_out, cfg.n_cond, cfg.film_hidden_dim, cfg.n_encoder_layers, cfg.d_model
            )
            self.decoder_film = DecoderFiLM(cfg.c_out, cfg.n_cond, cfg.film_hidden_dim)
        self.head = SharedHeadBlock(cfg)
        self.sparse_cnn = SparseCNN(cfg.d_model)
        self.cnn_blend_logit = nn.Parameter(torch.zeros(cfg.c_out))  # in CondiNILM's checkpoints; unused there too
        self.register_buffer("device_mean_on_power", torch.ones(cfg.c_out))  # likewise
        self.criterion = SoftGate(
            cfg.c_out, cfg.gate_source, cfg.gate_logits_floors, cfg.gate_soft_scale, cfg.gate_floor
        )

    @property
    def has_film(self) -> bool:
        return self.cfg.arch == "condinilm" and self.cfg.use_film

    @property
    def has_gate(self) -> bool:
        return self.cfg.arch == "condinilm"

    def forward(
        self, x: torch.Tensor, trace: Trace | None = None, what_if: UpstreamWhatIf | None = None
    ) -> UpstreamOutput:
        """x: (B, 1 + E, L) scaled aggregate + time features. what_if: the live graph's run-time switches (diagonal
        mask, FiLM on/off; model/upstream/whatif.py), None: the model as configured (the captured forward pass)."""
        put(trace, "input", x, ("batch", "channel", "time"), "0", "upstream", "scaled aggregate + time features")
        x_main = x[:, :1]  # (B, 1, L)
        tokens, stats_token = self.stem(x, trace)  # (B, L + 1, d), (B, 1, d)
        cond = gamma_enc = beta_enc = None
        if self.has_film:
            cond = condition_features(
                x_main, self.cfg.use_elec_features, self.cfg.use_freq_features, 8, trace, bands="floor"
            )  # (B, 13)
            gamma_enc, beta_enc = film_scaled(what_if, *self.encoder_film(cond, trace))  # (B, n_layers, d)
        h = self._encode(tokens, gamma_enc, beta_enc, trace, mask_flag(what_if, self.cfg.mask_diagonal))  # (B, L+1, d)
        enc = h[:, :-1].permute(0, 2, 1)  # (B, d, L): the stats token leaves here
        if self.cfg.arch == "nilmformer":
            stats_out = self.ProjStats2(stats_token)  # (B, 1, 2)
            put(trace, "stats_out", stats_out, ("batch", "token", "stat"), "10", "NILMFormer head", "mean', std'")
            power = self.head(enc, stats_out, trace)
            return UpstreamOutput(power=power, power_ungated=power, gate=None, gate_logit=None)
        return self._condinilm_outputs(x_main, enc, cond, trace, what_if)

    def _encode(self, h, gamma_enc, beta_enc, trace: Trace | None, mask) -> torch.Tensor:
        for i, layer in enumerate(self.encoder_layers):
            g = gamma_enc[:, i : i + 1] if gamma_enc is not None else None  # (B, 1, d)
            b = beta_enc[:, i : i + 1] if beta_enc is not None else None
            h = layer(h, g, b, mask, trace, f"encoder.{i}", None)
        h = self.final_norm(h)
        put(trace, "final_norm", h, ("batch", "time", "feature"), "7", "upstream", "final LayerNorm, L + 1 tokens")
        return h

    def _condinilm_outputs(self, x_main, enc, cond, trace: Trace | None, what_if=None) -> UpstreamOutput:
        gamma = beta = None
        if self.has_film:
            gamma, beta = film_scaled(what_if, *self.decoder_film(cond, trace))  # (B, D, 1) each
        power, logit = self.head(enc, gamma, beta, trace)  # (B, D, L) each
        if self.cfg.sparse_indices:
            power, logit = list(power.split(1, dim=1)), list(logit.split(1, dim=1))
            for k, i in enumerate(self.cfg.sparse_indices):
                power[i], logit[i] = self.sparse_cnn(x_main, k, trace, f"sparse.{self.cfg.devices[i]}")
            power, logit = torch.cat(power, dim=1), torch.cat(logit, dim=1)
        put(trace, "output.power_ungated", power, AX_BDL, "12", "CondiNILM", "ungated power (forward_with_gate)")
        put(trace, "output.gate_logit", logit, AX_BDL, "12", "CondiNILM", "gate logits (forward_with_gate)")
        gated, p = self.criterion(power, logit, trace)
        return UpstreamOutput(power=gated, power_ungated=power, gate=p, gate_logit=logit)

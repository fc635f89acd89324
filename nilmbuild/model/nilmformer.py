"""NILMFormer: stages 0-12 of forward-pass.md, wired from one module per concept."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from . import names, whatif
from .config import NILMFormerConfig
from .embedding import DilatedBlock
from .encoder import EncoderLayer
from .film import DecoderFiLM, EncoderFiLM, condition_features, film
from .heads import make_head, smoothstep
from .trace import Trace, linear, mul, permute, put, select
from .whatif import WhatIf

AX_BCT = ("batch", "channel", "time")


@dataclass
class NILMFormerOutput:
    power: torch.Tensor  # (B, c_out, L) gated power after output FiLM (scaled units)
    gate: torch.Tensor  # (B, c_out, L) gate probability p in [0, 1]
    gate_logit: torch.Tensor  # (B, c_out, L) p = sigmoid(gate_logit)
    power_raw: torch.Tensor  # (B, c_out, L) head regression output before gating and FiLM


class NILMFormer(nn.Module):
    def __init__(self, cfg: NILMFormerConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embedding = DilatedBlock(cfg.n_channels, cfg.c_embedding, cfg.kernel_size, cfg.dilations)
        self.pos_encoding = nn.Parameter(torch.randn(1, cfg.c_embedding, cfg.window) * 0.02)  # (1, 8, L)
        self.input_projection = nn.Conv1d(cfg.c_embedding, cfg.d_model, kernel_size=1)
        self.layers = nn.ModuleList(
            EncoderLayer(cfg.d_model, cfg.n_head, cfg.head_dim, cfg.d_ff, cfg.dp_rate, cfg.attn_dropout)
            for _ in range(cfg.n_encoder_layers)
        )
        self.encoder_film = EncoderFiLM(cfg.c_out, cfg.n_cond, cfg.film_hidden_dim, cfg.n_encoder_layers, cfg.d_model)
        self.decoder_film = DecoderFiLM(cfg.c_out, cfg.n_cond, cfg.film_hidden_dim)
        self.heads = nn.ModuleDict({d.name: make_head(d.head, cfg.d_model) for d in cfg.devices})
        self.register_buffer("gate_thresholds", torch.tensor([d.gate_threshold for d in cfg.devices]), persistent=False)

    def forward(
        self,
        x: torch.Tensor,
        *,
        gate_mode: str | None = None,
        trace: Trace | None = None,
        use_film: bool | None = None,
        mask_diagonal: bool | None = None,
        pos_start: torch.Tensor | None = None,
        what_if: WhatIf | None = None,
    ) -> NILMFormerOutput:
        """x: (B, 7, L) with L = cfg.window, or a crop (B, 7, l <= L) whose first step sits at position
        pos_start[b] of the window (training's multi-crop, architecture.md 10.4); the positional encoding
        is then sliced to positions pos_start[b] .. pos_start[b] + l. what_if: run-time settings as tensors
        (thresholds, FiLM affine and on/off, diagonal mask, soft gate; whatif.py) for the exported live graph;
        None (the default) is the traced and captured forward pass, unchanged."""
        cfg = self.cfg
        gate_mode = gate_mode or ("soft" if self.training else "hard")
        use_film = cfg.use_film if use_film is None else use_film
        mask_diagonal = whatif.mask_diagonal(what_if, cfg.mask_diagonal if mask_diagonal is None else mask_diagonal)
        B, C, L = x.shape  # (B, 7, L)
        put(trace, names.INPUT, x, AX_BCT, "0", "forward-pass.md 0", "scaled aggregate + 6 sin/cos time features")

        h = self._stem(x, L, pos_start, trace)  # (B, L, d_model): stages 1-5
        x_main = x[:, : cfg.c_in]  # (B, 1, L), kept for the condition features

        # Stage 6: condition features and encoder FiLM parameters
        cond = condition_features(
            x_main, cfg.use_elec_features, cfg.use_freq_features, cfg.n_freq_bands, trace
        )  # (B, 13)
        gamma_enc, beta_enc = whatif.encoder_film(what_if, *self.encoder_film(cond, trace))  # (B, n_layers, d_model)

        h = self._encode(h, gamma_enc if use_film else None, beta_enc if use_film else None, mask_diagonal, trace)

        # Stage 8: decoder FiLM parameters; stage 9: back to conv layout
        gamma_dec, beta_dec = whatif.output_film(what_if, *self.decoder_film(cond, trace))  # (B, D, 1) each
        h = h.transpose(1, 2)  # (B, d_model, L)
        put(
            trace,
            names.TRANSPOSE_OUT,
            h,
            ("batch", "feature", "time"),
            "9",
            "forward-pass.md 9",
            "back to conv layout (B, d_model, L)",
            derive=permute(names.encoder(len(self.layers) - 1, "out"), (0, 2, 1)),
        )

        # Stages 10-11: heads, gate, output FiLM
        logits, raws, powers = [], [], []
        for i, dev in enumerate(cfg.devices):
            logit, power_raw, gated = self._device(i, dev, h, gamma_dec, beta_dec, gate_mode, use_film, trace, what_if)
            logits.append(logit), raws.append(power_raw), powers.append(gated)

        return self._concat(logits, raws, powers, trace)  # stage 12

    def _encode(self, h, gamma_enc, beta_enc, mask_diagonal: bool, trace: Trace | None) -> torch.Tensor:
        """Stage 7: the encoder layers; gamma_enc, beta_enc (B, n_layers, d_model), or None for FiLM off."""
        for l, layer in enumerate(self.layers):
            g = gamma_enc[:, l : l + 1] if gamma_enc is not None else None  # (B, 1, d_model)
            b = beta_enc[:, l : l + 1] if beta_enc is not None else None
            h = layer(
                h,
                g,
                b,
                mask_diagonal=mask_diagonal,
                trace=trace,
                name=names.encoder(l),
                in_name=names.TRANSPOSE_IN if l == 0 else names.encoder(l - 1, "out"),
            )
        return h  # (B, L, d_model)

    def _concat(self, logits: list, raws: list, powers: list, trace: Trace | None) -> NILMFormerOutput:
        """Stage 12: concatenate the devices' (B, 1, L) outputs along the device axis."""
        out = NILMFormerOutput(
            power=torch.cat(powers, dim=1),
            gate=torch.sigmoid(torch.cat(logits, dim=1)),
            gate_logit=torch.cat(logits, dim=1),
            power_raw=torch.cat(raws, dim=1),
        )  # each (B, D, L)
        put(
            trace,
            names.OUTPUT_POWER,
            out.power,
            ("batch", "device", "time"),
            "12",
            "forward-pass.md 12",
            "per-device power (scaled)",
        )
        put(
            trace,
            names.OUTPUT_GATE,
            out.gate,
            ("batch", "device", "time"),
            "12",
            "forward-pass.md 12",
            "per-device gate probability",
        )
        return out

    def _stem(self, x: torch.Tensor, L: int, pos_start: torch.Tensor | None, trace: Trace | None) -> torch.Tensor:
        """Stages 1-5: instance norm, embedding, positional encoding, projection, transpose -> (B, L, d_model)."""
        # Stage 1: per-sample, per-channel instance norm (std unbiased, + 1e-5), in float64: a channel that is
        # constant over the window (month, day of year) then gives exactly 0, where float32 gives rounding noise
        # / (std ~1e-7 + 1e-5) that differs between runtimes and moves gates (docs/live-model.md)
        x64 = x.double()
        h = ((x64 - x64.mean(dim=-1, keepdim=True)) / (x64.std(dim=-1, keepdim=True) + 1e-5)).to(x.dtype)
        put(
            trace,
            names.INSTANCE_NORM,
            h,
            AX_BCT,
            "1",
            "forward-pass.md 1",
            "(x - mean) / (std + 1e-5) per sample and channel",
        )

        # Stages 2-5: embedding, positional encoding, projection, transpose
        h = self.embedding(h, trace)  # (B, 8, L)
        put(
            trace,
            names.POS_ENCODING,
            self.pos_encoding[0],
            ("channel", "time"),
            "3",
            "forward-pass.md 3",
            "learnable positional encoding (1, 8, L)",
        )
        h = h + self.positional(pos_start, L)  # (B, 8, L)
        put(trace, names.EMBED_WITH_POS, h, AX_BCT, "3", "forward-pass.md 3", "embedding + positional encoding")
        h = self.input_projection(h)  # (B, 96, L)
        put(
            trace,
            names.PROJECTION,
            h,
            ("batch", "feature", "time"),
            "4",
            "forward-pass.md 4",
            "1x1 conv 8 -> 96",
            derive=linear(
                names.EMBED_WITH_POS,
                names.param("input_projection.weight"),
                names.param("input_projection.bias"),
                axis=1,
            ),
        )
        h = h.transpose(1, 2)  # (B, L, 96)
        put(
            trace,
            names.TRANSPOSE_IN,
            h,
            ("batch", "time", "feature"),
            "5",
            "forward-pass.md 5",
            "to Transformer layout (B, L, d_model)",
            derive=permute(names.PROJECTION, (0, 2, 1)),
        )
        return h

    def _device(
        self, i, dev, h, gamma_dec, beta_dec, gate_mode: str, use_film: bool, trace: Trace | None, what_if=None
    ):
        """Stages 10-11 for device i: its head on h (B, d_model, L), the gate, the output FiLM -> 3 x (B, 1, L)."""
        name = f"heads.{dev.name}"  # names.head(dev.name, part)
        logit, power_raw = self.heads[dev.name](h, trace, name)  # (B, 1, L) each
        p = torch.sigmoid(logit)
        soft = smoothstep(p)
        hard = (p > whatif.threshold(what_if, self.gate_thresholds[i], i)).to(p.dtype)
        gated = whatif.gate(what_if, soft * power_raw, soft * power_raw if gate_mode == "soft" else hard * power_raw)
        if trace is not None:
            for key, t, doc, derive in (
                ("gate_logit", logit, "gate logit", None),
                ("gate_prob", p, "gate probability p = sigmoid(logit) = cls_prob / 2", select(names.OUTPUT_GATE, 1, i)),
                ("power_raw", power_raw, "regression branch: softplus(a) * log1p(softplus(raw))", None),
                ("soft_gate", soft, "smoothstep(p) = p^2 (3 - 2p)", None),
                ("hard_gate", hard, f"p > {dev.gate_threshold}", None),
                (
                    "power_soft",
                    soft * power_raw,
                    "soft-gated power (training)",
                    mul(f"{name}.soft_gate", f"{name}.power_raw"),
                ),
                (
                    "power_hard",
                    hard * power_raw,
                    "hard-gated power (inference)",
                    mul(f"{name}.hard_gate", f"{name}.power_raw"),
                ),
            ):
                put(trace, f"{name}.{key}", t[:, 0], ("batch", "time"), "10", "architecture.md 9", doc, derive)
        if use_film:
            gated = film(gated, gamma_dec[:, i : i + 1], beta_dec[:, i : i + 1])
        put(
            trace,
            f"{name}.power",
            gated[:, 0],
            ("batch", "time"),
            "11",
            "forward-pass.md 11",
            f"{gate_mode}-gated power after output FiLM",
            derive=select(names.OUTPUT_POWER, 1, i),
        )
        return logit, power_raw, gated

    def positional(self, pos_start: torch.Tensor | None, length: int) -> torch.Tensor:
        """The learnable encoding (1, 8, L), or its slices at each crop's positions (B, 8, length)."""
        if pos_start is None:
            if length != self.cfg.window:
                raise ValueError(f"input length {length} != window {self.cfg.window}: pass pos_start for crops")
            return self.pos_encoding
        idx = pos_start.to(torch.long)[:, None] + torch.arange(length, device=pos_start.device)  # (B, length)
        if int(idx.max()) >= self.cfg.window or int(idx.min()) < 0:
            raise ValueError("a crop reaches outside the window's positions")
        return self.pos_encoding[0][:, idx].permute(1, 0, 2)  # (B, 8, length)


def count_params(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def param_table(model: NILMFormer) -> dict:
    """Parameters per module, in the shape `nilmbuild info --json` prints."""
    return {
        "embedding": count_params(model.embedding),
        "pos_encoding": model.pos_encoding.numel(),
        "input_projection": count_params(model.input_projection),
        "encoder_layer": count_params(model.layers[0]),
        "encoder_layers": sum(count_params(l) for l in model.layers),
        "attention": count_params(model.layers[0].attn),
        "ffn": count_params(model.layers[0].pffn),
        "encoder_film": count_params(model.encoder_film),
        "decoder_film": count_params(model.decoder_film),
        "heads": {name: count_params(h) for name, h in model.heads.items()},
        "total": count_params(model),
    }

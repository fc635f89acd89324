"""Stage 7: one pre-norm encoder layer with FiLM after the FFN (encoder-film.md 6.3)."""

from __future__ import annotations

import torch
from torch import nn

from . import names
from .attention import DiagonallyMaskedSelfAttention
from .ffn import PositionWiseFeedForward
from .film import film
from .trace import Trace, add, alias, layernorm, put
from .trace import film as film_of

RESIDUALS = ("input", "normalised")


class EncoderLayer(nn.Module):
    """x = x + attn(LN1(x));  x = x + FiLM(FFN(LN2(x)))   (111,456 parameters at the defaults).

    residual_from "input" is the spec's pre-norm block above. "normalised" is what CondiNILM and the original
    NILMFormer compute: the residual is taken from the normalised stream, x = LN1(x); x = x + attn(x);
    x = LN2(x); x = x + FiLM(FFN(x)). eps: both LayerNorms' epsilon (upstream `norm_eps`).
    """

    def __init__(
        self,
        d_model: int,
        n_head: int,
        head_dim: int,
        d_ff: int,
        dropout: float,
        attn_dropout: float | None = None,
        residual_from: str = "input",
        eps: float = 1e-5,
    ) -> None:
        super().__init__()
        if residual_from not in RESIDUALS:
            raise ValueError(f"unknown residual_from {residual_from!r} (expected one of {RESIDUALS})")
        self.residual_from = residual_from
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.attn = DiagonallyMaskedSelfAttention(
            d_model, n_head, head_dim, dropout if attn_dropout is None else attn_dropout
        )
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.pffn = PositionWiseFeedForward(d_model, d_ff, dropout)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self,
        x: torch.Tensor,
        gamma: torch.Tensor | None,
        beta: torch.Tensor | None,
        mask_diagonal: bool = True,
        trace: Trace | None = None,
        name: str = "encoder.0",
        in_name: str | None = None,
    ) -> torch.Tensor:
        # x: (B, L, d_model), traced as `in_name`; gamma, beta: (B, 1, d_model) or None (FiLM off), rows
        # film_enc.gamma_mean[:, l] of layer l = the number ending `name`
        axes = ("batch", "time", "feature")
        put(
            trace,
            f"{name}.in",
            x,
            axes,
            "7",
            "encoder-film.md 6.3",
            "residual stream entering the layer",
            derive=alias(in_name) if in_name else None,
        )
        x = self._attention_block(x, mask_diagonal, trace, name)  # (B, L, d_model)
        return self._ffn_block(x, gamma, beta, trace, name)

    def _attention_block(self, x: torch.Tensor, mask_diagonal: bool, trace: Trace | None, name: str) -> torch.Tensor:
        """x + attn(LN1(x)), traced as {name}.ln1 / .attn.* / .resid1 (stages 7a-7c)."""
        axes = ("batch", "time", "feature")
        h = self.norm1(x)
        put(
            trace,
            f"{name}.ln1",
            h,
            axes,
            "7a",
            "encoder-film.md 6.4",
            "pre-norm LayerNorm 1",
            derive=layernorm(f"{name}.in", f"{name}.norm1", self.norm1.eps),
        )
        a = self.attn(h, mask_diagonal=mask_diagonal, trace=trace, name=f"{name}.attn", in_name=f"{name}.ln1")
        skip = f"{name}.in"
        if self.residual_from == "normalised":
            x, skip = h, f"{name}.ln1"
        x = x + self.dropout(a)  # (B, L, d_model)
        put(
            trace,
            f"{name}.resid1",
            x,
            axes,
            "7c",
            "encoder-film.md 6.4",
            "x + attention output",
            derive=add(skip, f"{name}.attn.out"),
        )
        return x

    def _ffn_block(self, x, gamma: torch.Tensor | None, beta: torch.Tensor | None, trace: Trace | None, name: str):
        """x + FiLM(FFN(LN2(x))), traced as {name}.ln2 / .ffn.* / .film / .out (stages 7d-7g)."""
        axes = ("batch", "time", "feature")
        h = self.norm2(x)
        put(
            trace,
            f"{name}.ln2",
            h,
            axes,
            "7d",
            "encoder-film.md 6.5",
            "pre-norm LayerNorm 2",
            derive=layernorm(f"{name}.resid1", f"{name}.norm2", self.norm2.eps),
        )
        f = self.pffn(h, trace=trace, name=f"{name}.ffn", in_name=f"{name}.ln2")  # (B, L, d_model)
        modulated, skip = f"{name}.ffn.out", f"{name}.resid1"
        if self.residual_from == "normalised":
            x, skip = h, f"{name}.ln2"
        if gamma is not None:
            f = film(f, gamma, beta)
            modulated = f"{name}.film"
            put(
                trace,
                modulated,
                f,
                axes,
                "7f",
                "encoder-film.md 6.6",
                "(1 + gamma) * ffn + beta, nan_to_num",
                derive=film_of(
                    f"{name}.ffn.out",
                    names.film("film_enc", "gamma_mean"),
                    names.film("film_enc", "beta_mean"),
                    int(name.rsplit(".", 1)[-1]),
                ),
            )
        x = x + self.dropout(f)
        put(
            trace,
            f"{name}.out",
            x,
            axes,
            "7g",
            "encoder-film.md 6.7",
            "x + modulated FFN output",
            derive=add(skip, modulated),
        )
        return x

"""Stages 6 and 8: condition features and the two FiLM generators (architecture.md 3.2 and 8)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from . import names
from .trace import Trace, put

ELEC_FEATURES = ("mean", "std", "rms", "peak", "crest")


def film(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    """Feature-wise linear modulation (1 + gamma) * x + beta, with the spec's NaN/inf guard."""
    return torch.nan_to_num((1.0 + gamma) * x + beta, nan=0.0, posinf=1e4, neginf=-1e4)


def rfft_magnitude(x: torch.Tensor) -> torch.Tensor:
    """|rFFT| over the last axis: (B, L) -> (B, L//2 + 1). While the ONNX exporter traces the model
    (nilmbuild/live/export.py), the same values as one ONNX DFT node and its magnitude."""
    if torch.jit.is_tracing():
        return _OnnxRfftMagnitude.apply(x)
    return torch.fft.rfft(x, dim=-1).abs()


class _OnnxRfftMagnitude(torch.autograd.Function):
    """torch.fft.rfft(x).abs() for the TorchScript ONNX exporter, which has no symbolic for aten::fft_rfft:
    DFT (opset 17+, onesided) of x as a real signal (B, L, 1) -> (B, L//2 + 1, 2), then sqrt(re^2 + im^2)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:  # the values traced through, for shapes
        return torch.fft.rfft(x, dim=-1).abs()

    @staticmethod
    def symbolic(g, x):
        signal = g.op("Unsqueeze", x, g.op("Constant", value_t=torch.tensor([-1])))  # (B, L, 1)
        spectrum = g.op("DFT", signal, axis_i=1, onesided_i=1)  # (B, L//2 + 1, 2): real, imaginary
        power = g.op(
            "ReduceSum", g.op("Mul", spectrum, spectrum), g.op("Constant", value_t=torch.tensor([-1])), keepdims_i=0
        )
        return g.op("Sqrt", power)


def band_edges(n_bins: int, n_bands: int) -> list[int]:
    """Split n_bins rFFT bins into n_bands contiguous, near-equal bands.

    L = 480 gives 241 bins, which 8 does not divide: edges are round(i * 241 / 8) =
    [0, 30, 60, 90, 120, 151, 181, 211, 241] (band widths 30 or 31; DC bin in band 0).
    """
    return [round(i * n_bins / n_bands) for i in range(n_bands + 1)]


def floor_band_edges(n_bins: int, n_bands: int) -> list[int]:
    """CondiNILM's bands: min(n_bands, n_bins) bands of n_bins // n bins each, the last one running to the end.

    L = 128 gives 65 bins: edges [0, 8, 16, 24, 32, 40, 48, 56, 65] (the last band holds 9 bins).
    """
    n = min(n_bands, n_bins)
    size = n_bins // n
    return [i * size for i in range(n)] + [n_bins]


BAND_LAYOUTS = {"even": band_edges, "floor": floor_band_edges}


def condition_features(
    x_main: torch.Tensor,
    use_elec: bool,
    use_freq: bool,
    n_bands: int,
    trace: Trace | None = None,
    bands: str = "even",
) -> torch.Tensor:
    """(B, 1, L) scaled aggregate (before instance norm) -> (B, 13) condition vector.
    bands: "even" (the spec's near-equal bands, band_edges) or "floor" (CondiNILM's, floor_band_edges)."""
    x = x_main[:, 0, :]  # (B, L)
    feats = []
    if use_elec:
        mean = x.mean(dim=-1)
        std = x.std(dim=-1, unbiased=False)
        rms = torch.sqrt(x.pow(2).mean(dim=-1) + 1e-6)
        peak = x.abs().amax(dim=-1)
        crest = peak / (rms + 1e-6)
        elec = torch.stack([mean, std, rms, peak, crest], dim=-1)  # (B, 5)
        put(
            trace,
            names.cond("elec"),
            elec,
            ("batch", "elec_feature"),
            "6b",
            "architecture.md 3.2",
            "mean, std, rms, peak, crest",
        )
        feats.append(elec)
    if use_freq:
        mag = rfft_magnitude(x - x.mean(dim=-1, keepdim=True))  # (B, L//2 + 1)
        put(
            trace,
            names.cond("spectrum"),
            mag,
            ("batch", "freq_bin"),
            "6b",
            "architecture.md 3.2",
            "|rFFT| of the centred aggregate",
        )
        e = BAND_LAYOUTS[bands](int(mag.shape[-1]), n_bands)  # int(): a static size, also while traced for ONNX
        band_means = torch.stack([mag[:, e[i] : e[i + 1]].mean(dim=-1) for i in range(len(e) - 1)], dim=-1)  # (B, 8)
        put(
            trace,
            names.cond("bands"),
            band_means,
            ("batch", "band"),
            "6b",
            "architecture.md 3.2",
            "mean magnitude in 8 frequency bands",
        )
        feats.append(band_means)
    cond = torch.cat(feats, dim=-1) if feats else x.new_zeros(x.shape[0], 0)  # (B, 13); (B, 0) with both off
    put(
        trace,
        names.cond("vector"),
        cond,
        ("batch", "cond_feature"),
        "6b",
        "architecture.md 3.2",
        "5 electrical + 8 band features",
    )
    return cond


class FiLMGenerator(nn.Module):
    """Device embedding + condition -> 2-layer MLP -> raw FiLM parameters per device.

    inp = cat([cond (B, D, 13), emb (B, D, 32)]) -> fc1 (45 -> 32) -> ReLU -> fc2 (32 -> out_dim).
    fc2 starts at zero so that FiLM starts as the identity (gamma = beta = 0); training moves it.
    """

    def __init__(self, n_devices: int, n_cond: int, hidden: int, out_dim: int) -> None:
        super().__init__()
        self.device_embed = nn.Embedding(n_devices, hidden)
        self.fc1 = nn.Linear(n_cond + hidden, hidden)
        self.fc2 = nn.Linear(hidden, out_dim)
        nn.init.zeros_(self.fc2.weight)
        nn.init.zeros_(self.fc2.bias)

    def forward(self, cond: torch.Tensor, trace: Trace | None = None, name: str = "film") -> torch.Tensor:
        B, D = cond.shape[0], self.device_embed.num_embeddings
        emb = self.device_embed.weight.unsqueeze(0).expand(B, -1, -1)  # (B, D, 32)
        inp = torch.cat([cond.unsqueeze(1).expand(-1, D, -1), emb], dim=-1)  # (B, D, 45)
        put(
            trace,
            f"{name}.input",
            inp,
            ("batch", "device", "film_in"),
            "6c",
            "architecture.md 8.3",
            "[13 condition | 32 device embedding]",
        )
        h = F.relu(self.fc1(inp))  # (B, D, 32)
        put(trace, f"{name}.hidden", h, ("batch", "device", "film_hidden"), "6c", "architecture.md 8.3", "fc1 + ReLU")
        return self.fc2(h)  # (B, D, out_dim)


class EncoderFiLM(nn.Module):
    """fc2 width n_layers * 2 * d_model = 3 * 2 * 96 = 576 (the spec also says 1152; the arithmetic gives 576)."""

    def __init__(self, n_devices: int, n_cond: int, hidden: int, n_layers: int, d_model: int) -> None:
        super().__init__()
        self.n_layers, self.d_model = n_layers, d_model
        self.gen = FiLMGenerator(n_devices, n_cond, hidden, n_layers * 2 * d_model)

    def forward(self, cond: torch.Tensor, trace: Trace | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        gb = self.gen(cond, trace, "film_enc")  # (B, D, 576)
        B, D, _ = gb.shape
        gb = gb.view(B, D, self.n_layers, 2, self.d_model)  # (B, D, 3, 2, 96)
        gamma = 0.5 * torch.tanh(gb[:, :, :, 0, :])  # (B, D, 3, 96)
        beta = 0.5 * torch.tanh(gb[:, :, :, 1, :])  # (B, D, 3, 96)
        ax = ("batch", "device", "layer", "feature")
        put(
            trace,
            names.film("film_enc", "gamma"),
            gamma,
            ax,
            "6c",
            "architecture.md 8.3",
            "0.5 tanh: per device, per layer scale",
        )
        put(
            trace,
            names.film("film_enc", "beta"),
            beta,
            ax,
            "6c",
            "architecture.md 8.3",
            "0.5 tanh: per device, per layer shift",
        )
        gamma_l, beta_l = gamma.mean(dim=1), beta.mean(dim=1)  # (B, 3, 96): shared encoder
        ax = ("batch", "layer", "feature")
        put(
            trace,
            names.film("film_enc", "gamma_mean"),
            gamma_l,
            ax,
            "6c",
            "architecture.md 8.3",
            "gamma averaged over devices",
        )
        put(
            trace,
            names.film("film_enc", "beta_mean"),
            beta_l,
            ax,
            "6c",
            "architecture.md 8.3",
            "beta averaged over devices",
        )
        return gamma_l, beta_l


class DecoderFiLM(nn.Module):
    """fc2 width 2: one (gamma, beta) pair per device for its head's power output."""

    def __init__(self, n_devices: int, n_cond: int, hidden: int) -> None:
        super().__init__()
        self.gen = FiLMGenerator(n_devices, n_cond, hidden, 2)

    def forward(self, cond: torch.Tensor, trace: Trace | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        gb = self.gen(cond, trace, "film_dec")  # (B, D, 2)
        gamma = 0.5 * torch.tanh(gb[..., 0:1])  # (B, D, 1)
        beta = 0.5 * torch.tanh(gb[..., 1:2])  # (B, D, 1)
        put(
            trace,
            names.film("film_dec", "gamma"),
            gamma[..., 0],
            ("batch", "device"),
            "8",
            "architecture.md 8.4",
            "output FiLM scale per device",
        )
        put(
            trace,
            names.film("film_dec", "beta"),
            beta[..., 0],
            ("batch", "device"),
            "8",
            "architecture.md 8.4",
            "output FiLM shift per device",
        )
        return gamma, beta

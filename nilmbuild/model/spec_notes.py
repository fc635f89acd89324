"""Where ../shared/spec contradicts itself or is silent, what nilmbuild does and why.

This list is the single source: docs/spec-notes.md is rendered from it (`python -m nilmbuild.model.spec_notes`,
checked by a test) and the capture meta carries it so every page can show the notes that concern it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class SpecNote:
    id: str
    topic: str
    spec: str       # what the spec says (with where)
    choice: str     # what nilmbuild implements
    why: str
    pages: tuple[str, ...] = ()


NOTES: tuple[SpecNote, ...] = (
    SpecNote("film-width", "Encoder FiLM fc2 width",
             "1152 in architecture.md 4.2 / 8.3; 576 in architecture.md 13.4 and forward-pass.md stage 6",
             "576 = n_layers x 2 x d_model = 3 x 2 x 96",
             "the reshape to (B, 5, 3, 2, 96) only works with 576 outputs; 1152 would need 4 values per feature",
             ("film", "encoder")),
    SpecNote("film-params", "Encoder FiLM parameter count",
             "'~4,000' (forward-pass.md 4.3), '~6,000' (encoder-film.md 6.9)",
             "20,640 = Embedding(5, 32) 160 + fc1 45x32+32 1,472 + fc2 32x576+576 19,008",
             "the stated layer sizes fix the count; the spec's estimates are not consistent with them", ("film",)),
    SpecNote("ffn-params", "FFN parameter count",
             "74,112 (forward-pass.md 4.3) and 74,208 (encoder-film.md 6.5)",
             "74,208 = 96x384 + 384 + 384x96 + 96",
             "74,112 forgets the 96 output biases of Linear(384, 96)", ("encoder",)),
    SpecNote("gate-scale", "Smoothstep input",
             "smoothstep on cls_prob in [0, 2] (architecture.md 9.1) vs on s = cls_prob / 2 (forward-pass.md 10, architecture.md 13.5)",
             "gate probability p = cls_prob / 2 = sigmoid(logit) in [0, 1]; soft gate smoothstep(p); hard gate p > the device's threshold (0.5 by default; `nilmbuild train` calibrates it per device on the validation split)",
             "x^2 (3 - 2x) is only monotone on [0, 1] (it is -4 at x = 2); thresholds are then on the same [0, 1] scale for every head",
             ("gate",)),
    SpecNote("regression", "Regression branch activation",
             "'ReLU -> log1p -> softplus_amplitude' (architecture.md 9.1, no formula)",
             "power_raw = softplus(a) * log1p(relu(raw)), one learnable scalar a per regular head, softplus(a) = 1 at start",
             "the most literal reading that keeps power >= 0 and the amplitude positive", ("gate",)),
    SpecNote("sparse-gate", "Sparse heads' gating",
             "SparseDeviceCNN outputs [power, gate logit]; 9.4 gates every device's power",
             "power_raw = relu(channel 0), p = sigmoid(channel 1), then the same soft/hard gate as regular heads",
             "one gate rule for all five devices; relu keeps power >= 0 like the regular head", ("gate",)),
    SpecNote("sparse-input", "Sparse heads' input",
             "'bypasses transformer' and 'on raw input' in prose, but Conv1d(96, 64) on encoder features in the layer table",
             "the heads read the encoder output (96 channels)",
             "the layer shapes (96 input channels) only fit the encoder output", ("overview",)),
    SpecNote("head-params", "Head and total parameter counts",
             "heads '~100,000', total '~550,000' (forward-pass.md 4.3)",
             "sparse head 31,234, regular head 86,531, heads 322,061, total 684,367",
             "the stated conv sizes fix the counts; the total stays in the spec's order of magnitude", ("overview",)),
    SpecNote("bands", "Frequency bands",
             "'8 equal frequency bands' of the rFFT magnitude (architecture.md 3.2)",
             "L = 480 gives 241 bins; edges round(i x 241 / 8) = 0, 30, 60, 90, 120, 151, 181, 211, 241",
             "241 is not divisible by 8; bands differ by at most one bin", ("film",)),
    SpecNote("cond-input", "Condition-feature input",
             "x_main = original_x[:, 0:1, :] (forward-pass.md 6a)",
             "the scaled aggregate before instance norm",
             "instance norm would erase the level (mean, rms, peak) the features are meant to carry", ("film",)),
    SpecNote("embed-residual", "Embedding residual 1x1 conv",
             "'+ residual (1x1 conv to match channels: 7->8)', 56 parameters, total ~896",
             "bias-free Conv1d(7, 8, 1); identity when channels match",
             "56 = 8 x 7 weights and no bias gives exactly the spec's 896", ("embedding",)),
    SpecNote("film-init", "FiLM initialisation",
             "silent",
             "both FiLM generators' fc2 start at zero, so FiLM starts as the identity",
             "common FiLM practice; training moves gamma and beta away from 0", ("film",)),
    SpecNote("stage-numbers", "Stage numbers",
             "architecture.md 4.2 and forward-pass.md number stages 8-12 differently",
             "forward-pass.md numbering: 8 decoder FiLM, 9 transpose, 10 heads, 11 output FiLM, 12 concatenate",
             "forward-pass.md is the file that zooms in on the forward pass", ("forward",)),
    SpecNote("public-code", "Differences from public NILMFormer code",
             "1 + 6 input channels, instance norm on all 7 channels, learnable (1, 8, L) positional encoding, no stats token",
             "as the spec says",
             "nilmbuild implements the spec; the official code (1 + 8 channels, power-only norm, stats token) differs",
             ("overview",)),
)


def as_dicts() -> list[dict]:
    return [asdict(n) for n in NOTES]


def render_markdown() -> str:
    out = ["# Spec notes: where the spec contradicts itself, and what nilmbuild does",
           "",
           "Rendered from `nilmbuild/model/spec_notes.py` by `python -m nilmbuild.model.spec_notes > docs/spec-notes.md`;",
           "the pages show the notes that concern them.",
           ""]
    for n in NOTES:
        out += [f"## {n.topic}", "", f"- **Spec:** {n.spec}", f"- **nilmbuild:** {n.choice}", f"- **Why:** {n.why}", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(render_markdown(), end="")

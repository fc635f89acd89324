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
    spec: str  # what the spec says (with where)
    choice: str  # what nilmbuild implements
    why: str
    pages: tuple[str, ...] = ()


NOTES: tuple[SpecNote, ...] = (
    SpecNote(
        "film-width",
        "Encoder FiLM fc2 width",
        "1152 in architecture.md 4.2 / 8.3; 576 in architecture.md 13.4 and forward-pass.md stage 6",
        "576 = n_layers x 2 x d_model = 3 x 2 x 96",
        "the reshape to (B, 5, 3, 2, 96) only works with 576 outputs; 1152 would need 4 values per feature",
        ("film", "encoder"),
    ),
    SpecNote(
        "film-params",
        "Encoder FiLM parameter count",
        "'~4,000' (forward-pass.md 4.3), '~6,000' (encoder-film.md 6.9)",
        "20,640 = Embedding(5, 32) 160 + fc1 45x32+32 1,472 + fc2 32x576+576 19,008",
        "the stated layer sizes fix the count; the spec's estimates are not consistent with them",
        ("film",),
    ),
    SpecNote(
        "ffn-params",
        "FFN parameter count",
        "74,112 (forward-pass.md 4.3) and 74,208 (encoder-film.md 6.5)",
        "74,208 = 96x384 + 384 + 384x96 + 96",
        "74,112 forgets the 96 output biases of Linear(384, 96)",
        ("encoder",),
    ),
    SpecNote(
        "gate-scale",
        "Smoothstep input",
        "smoothstep on cls_prob in [0, 2] (architecture.md 9.1) vs on s = cls_prob / 2 (forward-pass.md 10, architecture.md 13.5)",
        "gate probability p = cls_prob / 2 = sigmoid(logit) in [0, 1]; soft gate smoothstep(p); hard gate p > the device's threshold (0.5 by default; `nilmbuild train` calibrates it per device on the validation split)",
        "x^2 (3 - 2x) is only monotone on [0, 1] (it is -4 at x = 2); thresholds are then on the same [0, 1] scale for every head",
        ("gate",),
    ),
    SpecNote(
        "regression",
        "Regression branch activation",
        "'ReLU -> log1p -> softplus_amplitude' (architecture.md 9.1, no formula)",
        "power_raw = softplus(a) * log1p(softplus(raw)), one learnable scalar a per regular head, softplus(a) = 1 at start",
        "log1p and the softplus amplitude as written; softplus (the smooth ReLU) in place of the ReLU because a ReLU "
        "whose input goes negative everywhere never recovers: in a training run the washing machine's regression "
        "branch died in the first epoch (power_raw = 0 everywhere) and the output FiLM's beta then carried a constant "
        "~300 W. With softplus the branch stays trainable and the gate alone switches a device off",
        ("gate",),
    ),
    SpecNote(
        "sparse-gate",
        "Sparse heads' gating",
        "SparseDeviceCNN outputs [power, gate logit]; 9.4 gates every device's power",
        "power_raw = softplus(channel 0), p = sigmoid(channel 1), then the same soft/hard gate as regular heads",
        "one gate rule for all five devices; softplus keeps power > 0 and, unlike relu, cannot die (see the regression note)",
        ("gate",),
    ),
    SpecNote(
        "sparse-input",
        "Sparse heads' input",
        "'bypasses transformer' and 'on raw input' in prose, but Conv1d(96, 64) on encoder features in the layer table",
        "the heads read the encoder output (96 channels)",
        "the layer shapes (96 input channels) only fit the encoder output",
        ("overview",),
    ),
    SpecNote(
        "head-params",
        "Head and total parameter counts",
        "heads '~100,000', total '~550,000' (forward-pass.md 4.3)",
        "sparse head 31,234, regular head 86,531, heads 322,061, total 684,367",
        "the stated conv sizes fix the counts; the total stays in the spec's order of magnitude",
        ("overview",),
    ),
    SpecNote(
        "bands",
        "Frequency bands",
        "'8 equal frequency bands' of the rFFT magnitude (architecture.md 3.2)",
        "L = 480 gives 241 bins; edges round(i x 241 / 8) = 0, 30, 60, 90, 120, 151, 181, 211, 241",
        "241 is not divisible by 8; bands differ by at most one bin",
        ("film",),
    ),
    SpecNote(
        "cond-input",
        "Condition-feature input",
        "x_main = original_x[:, 0:1, :] (forward-pass.md 6a)",
        "the scaled aggregate before instance norm",
        "instance norm would erase the level (mean, rms, peak) the features are meant to carry",
        ("film",),
    ),
    SpecNote(
        "embed-residual",
        "Embedding residual 1x1 conv",
        "'+ residual (1x1 conv to match channels: 7->8)', 56 parameters, total ~896",
        "bias-free Conv1d(7, 8, 1); identity when channels match",
        "56 = 8 x 7 weights and no bias gives exactly the spec's 896",
        ("embedding",),
    ),
    SpecNote(
        "film-init",
        "FiLM initialisation",
        "silent",
        "both FiLM generators' fc2 start at zero, so FiLM starts as the identity",
        "common FiLM practice; training moves gamma and beta away from 0",
        ("film",),
    ),
    SpecNote(
        "stage-numbers",
        "Stage numbers",
        "architecture.md 4.2 and forward-pass.md number stages 8-12 differently",
        "forward-pass.md numbering: 8 decoder FiLM, 9 transpose, 10 heads, 11 output FiLM, 12 concatenate",
        "forward-pass.md is the file that zooms in on the forward pass",
        ("forward",),
    ),
    SpecNote(
        "public-code",
        "Differences from public NILMFormer code",
        "1 + 6 input channels, instance norm on all 7 channels, learnable (1, 8, L) positional encoding, no stats token",
        "as the spec says",
        "nilmbuild implements the spec; the official code (1 + 8 channels, power-only norm, stats token) differs",
        ("overview",),
    ),
    # ---- around the model: data, training, inference (issue 16) ----
    SpecNote(
        "attn-dropout",
        "Dropout on the attention weights",
        "dropout = 0.2 in the attention configuration (attention.md 7.2)",
        "dropout 0.2 on both residual branches and inside the FFN as specified; 0 on the attention weights (config `attn_dropout`)",
        "a (B, 8, 480, 480) dropout mask per layer dominated the training step on CPU and forces PyTorch's unfused "
        "attention; without it one step is 4.1x faster (batch 8: 1.09 s -> 0.27 s) and uses the fused kernel. "
        "Inference is unchanged (dropout is off at inference either way)",
        ("attention", "training"),
    ),
    SpecNote(
        "crops",
        "Multi-crop",
        "after warm-up, '2-4 crops per sequence', 'k crops of crop_len', event-biased (architecture.md 10.4, 13.6); crop_len not given",
        "each window of the batch gives k crops (k uniform in 2..4 per step) of crop_len = window / 2 steps (`--crop-len`); "
        "a crop's centre is an ON step of some device with probability 0.7, else uniform; the model sees the crop "
        "itself and slices its positional encoding at the crop's positions",
        "the spec fixes neither crop_len nor the event bias; half a window keeps 4 hours of context",
        ("training",),
    ),
    SpecNote(
        "loss-weights",
        "Multi-task loss weights",
        "'learnable/configured weights' (architecture.md 10.1)",
        "configured per device type by default; `nilmbuild train --loss-weighting uncertainty` learns one weight per "
        "device (Kendall, Gal & Cipolla 2018: exp(-s_i) L_i + s_i), logged per epoch as `task_weights`",
        "the per-type weights are what the shipped checkpoint uses; learned weights are an option, compared in docs/training.md",
        ("training",),
    ),
    SpecNote(
        "loss-components",
        "Number of loss components",
        "'7 loss components per device' (architecture.md 10.1), plus a gate BCE in 13.6 and anti-collapse / output-stats schedules in 10.4",
        "10 logged components: the 7, gate BCE, anti-collapse = relu(1 - sum(p on) / sum(y on)) and "
        "out-stats = |mean p - mean y| + |std p - std y| per window",
        "the spec gives only the schedules of anti-collapse and output stats; these formulas are our own",
        ("training",),
    ),
    SpecNote(
        "mae-split",
        "MAE on / off split",
        "ON = power > 0, OFF = power = 0 (architecture.md 10.1)",
        "ON / OFF = the duration-filtered states from the device thresholds (the same labels as the gate's target)",
        "with real meters 'power > 0' is almost always true (standby, noise), so the split would be meaningless",
        ("training",),
    ),
    SpecNote(
        "zero-loss",
        "Zero penalty",
        "'penalize non-zero predictions during OFF' (architecture.md 10.1)",
        "mean relu(p) over OFF samples: negative predictions are not penalised by it",
        "the heads' raw power is >= 0 and only the output FiLM's beta can go negative, which post-processing clamps",
        ("training",),
    ),
    SpecNote(
        "gate-bce",
        "Gate BCE and initial threshold",
        "'Gate Consistency BCE loss' (13.6), no weighting; hard gate p > 0.5",
        "BCE with ON samples weighted by pos_weight = clip(sqrt(OFF/ON), 1, 10); initial hard-gate threshold w / (w + 1), "
        "then each device's threshold is calibrated on the validation split after training",
        "rare devices (ON 0.5 % of the time) otherwise learn 'always OFF'; the weighting inflates p, so the 50 % point moves to w / (w + 1)",
        ("gate", "training"),
    ),
    SpecNote(
        "soft-gate",
        "Gating during training",
        "'gated_pred = gate * pred' (13.6) vs smoothstep(gate) (9.4, 13.5)",
        "training: smoothstep(p) * power_raw; inference: (p > threshold) * power_raw",
        "9.4 and 13.5 describe the gate in detail; 13.6 is a summary diagram",
        ("gate",),
    ),
    SpecNote(
        "closed-gate",
        "Output while the gate is closed",
        "gate first, then the output FiLM (architecture.md 9.4, forward-pass.md 10-11)",
        "as the spec says: a closed gate outputs (1 + gamma) * 0 + beta = beta, a small constant per device and window",
        "the spec's order; post-processing's long-OFF suppression and clamp at 0 W remove the offset, and the Gate and "
        "Disaggregation pages show it",
        ("gate", "disaggregation"),
    ),
    SpecNote(
        "device-typing",
        "Device type classification",
        "duty < 0.03 and peak > 2000 W -> sparse_high_power; duty < 0.03 -> sparse_medium_power; duty < 0.05 and "
        "duration < 120 -> long_cycle; duty < 0.25 and cv > 0.5 -> cycling_low_power; duty > 0.8 -> always_on (10.2)",
        "sparse also needs a mean ON time <= 30 min; long_cycle = duty < 0.10 and mean ON > 30 min; cycling_low_power "
        "also catches 0.05 <= duty <= 0.8 with peak < 500 W (a fridge); anything else is 'regular'",
        "a washing machine (duty 0.02, peak 2.3 kW) would otherwise be 'sparse_high_power', and a fridge's regular "
        "compressor cycles (cv 0.2) miss the cv > 0.5 rule; the spec's tree ends in '...'",
        ("training",),
    ),
    SpecNote(
        "labels",
        "ON/OFF labels",
        "ON = power > threshold (architecture.md 2.3)",
        "threshold, then Kelly's rules: OFF gaps shorter than min-OFF are bridged, then ON runs shorter than min-ON are "
        "dropped (nilm-facts durations, in steps at the resample rate, at least 1). UK-DALE and other sources use "
        "Kelly's min-ON; REFIT (thresholds 300 W) keeps the bridging but drops no ON run",
        "plain thresholding splits one dishwasher cycle into several short activations; Kelly's 30-minute min-ON "
        "assumes a 10-20 W threshold, and at REFIT's 300 W it deleted almost every washing-machine activation (11 % "
        "of its energy inside ON periods; 81 % without min-ON). `nilmbuild data` prints each device's share",
        ("data",),
    ),
    SpecNote(
        "time-features",
        "Hour feature",
        "hour of day, sin/cos (architecture.md 3.1; an example with integer hours)",
        "fractional hours: hour = h + m / 60 (10:30 -> hour_sin 0.383, not 0.5)",
        "at 1-minute resolution integer hours would make 60 consecutive steps identical",
        ("data",),
    ),
    SpecNote(
        "scalers",
        "Scaling strategy",
        "four strategies for the data (architecture.md 2.2)",
        "all four for the aggregate (`nilmbuild train --scaler`); appliance targets are always max-scaled",
        "the heads output power >= 0 (softplus, relu), so targets must map 0 W to 0 and stay >= 0",
        ("data",),
    ),
    SpecNote(
        "redd-cutoff",
        "REDD aggregate cut-off",
        "'varies' (architecture.md 2.1)",
        "6000 W, like UK-DALE (REFIT 10000 W)",
        "REDD's 2-phase US mains rarely exceed it at 1-minute resolution; PrepConfig.cutoff_w overrides it",
        ("data",),
    ),
    SpecNote(
        "seq2subseq",
        "Seq2subseq window positions",
        "window k = [240k, 240k + 480), centre [240k + 120, 240k + 360) (architecture.md 11.1)",
        "the series is padded by 120 steps on the left (edge values), so window k covers [240k - 120, 240k + 360) of the "
        "series and its kept centre is [240k, 240k + 240)",
        "with the spec's positions the first and last 120 steps would have no centre prediction",
        ("disaggregation",),
    ),
    SpecNote(
        "postprocess",
        "Post-processing order and durations",
        "short-activation suppression (kettle 2 steps, fridge 10), long-OFF gate suppression, then denormalise (11.2)",
        "denormalise first, then short-activation suppression with the labels' min-ON (kettle and fridge 1 step at 60 s), "
        "long-OFF suppression, a clamp at 0 W, and a cap of the devices' sum at the aggregate",
        "0 scaled is 0 W only for max scaling; the spec's step counts are for 6-8 s data; appliances cannot draw more "
        "than the meter measured (`nilmbuild evaluate` reports how often the cap binds)",
        ("disaggregation",),
    ),
    SpecNote(
        "optimiser",
        "Optimiser schedule and training windows",
        "AdamW; learning-rate schedule and window sampling not given (10.4)",
        "linear warm-up over 5 % of the steps, then cosine decay to 5 % of the rate; every epoch draws its training "
        "windows at fresh random offsets of the continuous train block (seeded, so runs are reproducible)",
        "a fixed 240-step grid shows each activation at only two positions in the window",
        ("training",),
    ),
)


def as_dicts() -> list[dict]:
    return [asdict(n) for n in NOTES]


def render_markdown() -> str:
    out = [
        "# Spec notes: where the spec contradicts itself, and what nilmbuild does",
        "",
        "Rendered from `nilmbuild/model/spec_notes.py` by `python -m nilmbuild.model.spec_notes > docs/spec-notes.md`;",
        "the pages show the notes that concern them.",
        "",
    ]
    for n in NOTES:
        out += [f"## {n.topic}", "", f"- **Spec:** {n.spec}", f"- **nilmbuild:** {n.choice}", f"- **Why:** {n.why}", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(render_markdown(), end="")

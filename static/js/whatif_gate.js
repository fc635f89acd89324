/* whatif_gate.js: the Gate page's what-if panel (whatif_panel.js): the page's threshold slider sets the selected
 * device's hard-gate threshold (the other devices keep their calibrated ones) and its gate mode picks hard or soft
 * (smoothstep, as the capture's ablation.soft_gate run); the panel shows the live model's final watts with them.
 *   var wi = gateWhatIf({after, cap, state, sampleLabel}); ... wi.update() after a change.
 * state: the page's {sample, dev, mode, threshold}. */
import { whatIfPanel } from "./whatif_panel.js";

export function gateWhatIf(opts) {
  var state = opts.state, panel;
  panel = whatIfPanel({ after: opts.after, cap: opts.cap, settings: function () {
    var spec = panel.data.live, thr = spec.whatIf.thresholds.value.slice(), dev = spec.devices[state.dev];
    thr[state.dev] = state.threshold;
    var soft = state.mode === "soft", own = Math.fround(state.threshold) === Math.fround(spec.whatIf.thresholds.value[state.dev]);
    var label = soft ? "the soft gate (smoothstep)" : own ? "every device at its calibrated threshold"
      : dev.replace(/_/g, " ") + " at threshold " + state.threshold.toFixed(2) + ", the others at theirs";
    return { sample: state.sample, sampleLabel: opts.sampleLabel(state.sample), whatIf: { thresholds: thr, softGate: soft },
             label: label, reference: soft ? "soft_gate" : null };
  } });
  return panel;
}

/* whatif_attention.js: the Attention page's what-if panel (whatif_panel.js): the page's diagonal-mask toggle runs
 * the live model with or without the mask in every layer (without: as the capture's ablation.no_mask run) and the
 * panel shows the final watts.   var wi = attentionWhatIf({after, cap, state, sampleLabel}); wi.update();
 * state: the page's {sample, masked}. */
import { whatIfPanel } from "./whatif_panel.js";

export function attentionWhatIf(opts) {
  var state = opts.state;
  return whatIfPanel({ after: opts.after, cap: opts.cap, settings: function () {
    return { sample: state.sample, sampleLabel: opts.sampleLabel(state.sample), whatIf: { maskDiagonal: state.masked },
             label: state.masked ? "the diagonal masked (as trained)" : "the diagonal mask off in every layer",
             reference: state.masked ? null : "no_mask" };
  } });
}

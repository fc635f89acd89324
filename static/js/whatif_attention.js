/* whatif_attention.js: the Attention page's live-model additions.
 * 1. The what-if panel (whatif_panel.js, issue 11 item 4): the page's diagonal-mask toggle runs the live model with
 *    or without the mask in every layer (without: as the capture's ablation.no_mask run) to the final watts.
 * 2. The source switch (whatif_signal_attention.js, item 5): "your signal", the Playground's edit, drawn instead.
 *   var wi = attentionWhatIf({after, cap, state, sampleLabel}); wi.update() after any change of the page's state.
 * state: the page's {sample, masked, layer, head, query}. */
import { whatIfPanel } from "./whatif_panel.js";
import { attentionSignal } from "./whatif_signal_attention.js";

export function attentionWhatIf(opts) {
  var state = opts.state;
  var panel = whatIfPanel({ after: opts.after, cap: opts.cap, settings: function () {
    return { sample: state.sample, sampleLabel: opts.sampleLabel(state.sample), whatIf: { maskDiagonal: state.masked },
             label: state.masked ? "the diagonal masked (as trained)" : "the diagonal mask off in every layer",
             reference: state.masked ? null : "no_mask" };
  } });
  var main = document.getElementById("att-main-wrap");
  var signal = attentionSignal({ spec: panel.data.live, state: state, controlsEl: document.getElementById("nb-controls"),
                                 before: main, hide: [main, opts.after.closest(".att-secondary") || opts.after] });
  return { update: function () { panel.update(); signal.update(); }, state: panel.state, panel: panel, signal: signal };
}

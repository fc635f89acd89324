/* whatif_film.js: the FiLM page's what-if panel (whatif_panel.js). The page's γ/β sliders act on one encoder layer's
 * device-mean FiLM parameters (γ′ = γ·scale + offset, β′ likewise); the panel adds a FiLM on/off switch (off: every
 * γ and β is 0, as the capture's ablation.no_film run) and shows the final watts of the live model with both.
 *   var wi = filmWhatIf({after, cap, state, sampleLabel}); ... wi.update() after a slider or selection change.
 * state: the page's {sample, layer, p: {gs, go, bs, bo}}. */
import { controls } from "./core.js";
import { whatIfPanel } from "./whatif_panel.js";

function atRest(p) { return p.gs === 1 && p.go === 0 && p.bs === 1 && p.bo === 0; }

export function filmWhatIf(opts) {
  var state = opts.state, on = true, panel;
  panel = whatIfPanel({ after: opts.after, cap: opts.cap, settings: function () {
    var n = panel.data.live.whatIf.film_enc_affine.dims[0], p = state.p, affine = [];
    for (var l = 0; l < n; l++) affine.push(l === state.layer ? [p.gs, p.go, p.bs, p.bo] : [1, 0, 1, 0]);
    var label = !on ? "FiLM off" : atRest(p) ? "the captured FiLM"
      : "layer " + state.layer + " γ′ = γ×" + p.gs.toFixed(2) + (p.go >= 0 ? " + " : " − ") + Math.abs(p.go).toFixed(2) +
        ", β′ = β×" + p.bs.toFixed(2) + (p.bo >= 0 ? " + " : " − ") + Math.abs(p.bo).toFixed(2);
    return { sample: state.sample, sampleLabel: opts.sampleLabel(state.sample), whatIf: { filmEncAffine: affine, filmOn: on },
             label: label, reference: !on ? "no_film" : null };
  } });
  controls.checkbox(panel.controls, "FiLM on (untick: every γ and β set to 0, the model without FiLM)", true,
    function (v) { on = v; panel.update(); }).id = "whatif-film-on";
  return panel;
}

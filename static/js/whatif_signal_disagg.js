/* whatif_signal_disagg.js: the Disaggregation page's "your signal" view (issue 11 item 5): the Playground's current
 * edit (your_signal.js) through the live model, drawn in the page's lanes instead of a captured window (no ground
 * truth: the reader made the signal up).
 *   var ds = disaggSignal(spec);   // spec: page().data.live
 *   ds.option                      // {value: "signal", label} for the page's View select
 *   ds.when(mode, remake, readoutEl, empty)  // mode "signal": run the model, then remake(); else remake() at once;
 *                                  // empty(message) replaces the chart with the message when there is no edit to run,
 *                                  // empty(null) brings the chart back
 *   ds.opts()                      // the lanes options (disaggregation_lanes.js) for the last run */
import { deviceColors } from "./disaggregation_watts.js";
import { windowClock } from "./time_axis.js";
import { yourSignal } from "./whatif_signal.js";

export function disaggSignal(spec) {
  var ys = yourSignal(spec), last = null;
  return {
    option: { value: "signal", label: "your signal (Playground edit), live model" },
    when: function (mode, remake, readout, empty) {
      if (mode !== "signal") { empty(null); return remake(); }
      ys.run(0, ["watts"]).then(function (r) { last = r; empty(null); remake(); readout.textContent = r.signal.label + ": the live model's answer (no ground truth)."; },
                                function (e) { empty(e.message); readout.textContent = ""; });
    },
    opts: function () {
      var sig = last.signal;
      return { agg: sig.aggregate, aggName: "your aggregate (Playground edit, W)", clock: windowClock(sig.start, spec.stepS),
               xLabel: "time (UTC) · your signal, from " + sig.start.replace("T", " ") + " UTC · live model",
               devices: spec.devices.map(function (d, i) { return { name: d, color: deviceColors[i % 5], pred: last.watts[d], truth: null }; }) };
    },
    last: function () { return last; },
  };
}

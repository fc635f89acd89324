/* whatif_signal.js: run the live model on "your signal", the Playground's current edit (your_signal.js), for the
 * Attention and Disaggregation pages' "your signal" source (issue 11 item 5).
 *   var ys = yourSignal(spec);          // spec: the live model's page data (graph from nilmbuild-model.js)
 *   ys.stored()                          -> the stored edit or null
 *   ys.run(head, ["watts", "attention"], whatIf?) -> Promise<{signal, outputs, watts: {device: Float32Array}}>
 *                                           (rejects with a message that says how to make one when none is stored)
 * Results are cached per (edit, head), so redrawing another layer or query costs nothing. */
import { createLiveModel } from "./live_model.js";
import { loadSignal } from "./your_signal.js";

export var NO_SIGNAL = "No edit of yours is stored yet: open the Playground page of this site, edit the signal " +
  "(draw, drop a kettle boil, scale...), then come back and pick \u201cyour signal\u201d again.";

export function yourSignal(spec) {
  var live = null, cache = {};
  function run(head, fetch, whatIf) {
    var sig = loadSignal(spec);
    if (!sig) return Promise.reject(new Error(NO_SIGNAL));
    var key = [sig.savedAt, head, fetch.join(","), JSON.stringify(whatIf || {})].join("|");
    if (cache.key === key) return cache.value;
    live = live || createLiveModel(spec);
    var p = live.run(live.modelInput(sig.aggregate, sig.start), head, fetch, whatIf).then(function (r) {
      return { signal: sig, outputs: r.outputs, watts: r.outputs.watts ? live.perDevice(r.outputs.watts) : null, ms: r.ms };
    });
    cache = { key: key, value: p };
    p.catch(function () { cache = {}; });
    return p;
  }
  return { stored: function () { return loadSignal(spec); }, run: run };
}

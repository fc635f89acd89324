/* live_explain.js: runs an occlusion explanation's forward passes through the live model (live_model.js), in
 * Web Workers of its own, and keeps every pass's watts, so that any device and any interval or step is then
 * explained from them without another pass (occlusion.js reduces them).
 *
 *   var runner = createOcclusionRunner(spec.live, spec.explain, createLiveModel);
 *   var job = runner.run(signalW, startISO, function (done, total) { ... });  // progress, on the main thread
 *   job.cancel();      // the next edit: no further pass is posted (job.posted counts them), job.promise -> null
 *   job.promise        // -> {signal, start, windows, watts: [Float32Array (devices x window)] (0: the signal;
 *                      //     k + 1: window k occluded), passes, ms} or null when cancelled
 *
 * The exported graph takes one window (its batch axis is fixed at 1: export.py traces (1, channels, window)), so
 * the copies go one per run; WORKERS workers (one per core, at most MAX_WORKERS) each take the next copy. Each
 * worker is a separate session (its own createLiveModel), so the page's own worker stays free for the edits.
 */
import { baseline, occluded, unchanged, windows } from "./occlusion.js";

export var MAX_WORKERS = 4;

// Each worker starts in a task of its own (a cold start posts it the runtime and the graph, ~15-20 ms each on 2
// loaded cores), so that starting an explanation adds no long task to the click's.
var LANE_GAP_MS = 1;
function later(ms) { return new Promise(function (resolve) { setTimeout(resolve, ms); }); }

export function workerCount() {
  return Math.max(1, Math.min(MAX_WORKERS, navigator.hardwareConcurrency || 1));
}

export function createOcclusionRunner(liveSpec, ex, makeModel) {
  var models = [];
  function model(i) { return models[i] || (models[i] = makeModel(liveSpec)); }

  function run(signal, start, onProgress) {
    var job = { cancelled: false, posted: 0 }, t0 = performance.now();
    var plan = planCopies(liveSpec, ex, model(0).modelInput, signal, start);
    var todo = plan.todo.slice(), done = 0, total = plan.todo.length;
    onProgress(0, total);
    function lane(i) {
      if (job.cancelled || !todo.length) return Promise.resolve();
      var k = todo.shift();
      job.posted++;
      return model(i).run(plan.input(k), 0, [ex.output]).then(function (r) {
        plan.watts[k] = r.outputs[ex.output].data;
        if (!job.cancelled) onProgress(++done, total);
        return lane(i);
      });
    }
    var lanes = [];
    for (var i = 0; i < workerCount(); i++) lanes.push(later(i * LANE_GAP_MS).then(lane.bind(null, i)));
    job.promise = Promise.all(lanes).then(function () {
      return job.cancelled ? null : plan.finish(performance.now() - t0);
    });
    job.cancel = function () { job.cancelled = true; };
    return job;
  }

  return { run: run, models: models };
}

// The copies to run: 0 is the signal itself, k + 1 the signal with window k occluded; a copy equal to the signal
// (the window already at the baseline) is not run again but takes the signal's watts.
function planCopies(liveSpec, ex, modelInput, signal, start) {
  var n = liveSpec.window, wins = windows(n, ex.window, ex.stride), sig = Float32Array.from(signal);
  var x = modelInput(sig, start), xb = modelInput(baseline(sig), start);
  var same = wins.map(function (w) { return unchanged(x, xb, w); });
  var todo = [0], watts = new Array(wins.length + 1);
  same.forEach(function (s, k) { if (!s) todo.push(k + 1); });
  return {
    todo: todo, watts: watts,
    input: function (k) { return k ? occluded(x, xb, wins[k - 1]) : x; },
    finish: function (ms) {
      same.forEach(function (s, k) { if (s) watts[k + 1] = watts[0]; });
      return { signal: sig, start: start, windows: wins, watts: watts, passes: todo.length, ms: ms };
    },
  };
}

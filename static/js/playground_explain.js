/* playground_explain.js: "Why", live, on the Playground (issue 32 item 4). With the Explain box on, after the
 * live model has run the reader's edit, the edited window is explained by occlusion (the definition of
 * `nilmbuild explain --method occlusion`, settings from Python: data.explain) with forward passes of the live
 * graph in workers of its own (live_explain.js); a progress bar counts the passes, and the next edit cancels
 * them. Every pass's watts are kept, so another device, interval or step is explained at once, without passes.
 * The attribution is drawn as a strip lane under the aggregate (explain_strip.js) with its colour legend; a click
 * on the strip explains the power at that step.
 *
 *   var ex = createExplainPanel({data, spec, signal: fn, start: fn, redraw: fn, geo: fn (drawLanes' last geometry)});
 *   ex.lane() -> the strip lane or null;  ex.edited() (cancel);  ex.ran() (the live model ran the current edit)
 */
import { setLegends } from "./colormaps.js";
import { fail } from "./core.js";
import { createLiveModel } from "./live_model.js";
import { parseStart } from "./live_time.js";
import { createOcclusionRunner, workerCount } from "./live_explain.js";
import { attribute, target } from "./occlusion.js";
import { pointToLane } from "./playground_plot.js";
import { testHook } from "./register.js";
import { CMAP, drawProgress, stripLane } from "./explain_strip.js";

function $(id) { return document.getElementById(id); }

export var STRIP_LANE = 1; // the page draws the strip right under the aggregate (lane 0)

export function createExplainPanel(o) {
  var E = { on: false, job: null, result: null, attr: null, progress: [0, 0], state: "off", runs: 0, workers: workerCount() };
  var runner = createOcclusionRunner(o.spec, o.data.explain, createLiveModel);
  wireControls(o, E, {
    changed: function () { enable(); reduce(o, E); o.redraw(); },
    toggled: function () { E.on = $("pg-explain").checked; E.on ? start(o, E, runner) : stop(o, E); },
  });
  testHook({ explain: E });
  return {
    lane: function () { return E.on ? laneOf(o, E) : null; },
    edited: function () { if (E.on) cancel(E, "cancelled by your edit; waiting for the model's run of it"); },
    ran: function () { if (E.on && !current(o, E)) start(o, E, runner); },
    urlBindings: [["explain", "#pg-explain"], ["exdev", "#pg-ex-device"], ["extarget", "#pg-ex-target"],
                  ["exfrom", "#pg-ex-from"], ["exto", "#pg-ex-to"], ["exstep", "#pg-ex-step"]],
  };
}

// The current edit has a finished explanation, or one on its way.
function current(o, E) {
  var r = E.result || (E.job && !E.job.cancelled && E.job.of);
  return !!r && r.start === o.start() && same(r.signal, o.signal());
}

function same(a, b) {
  if (a.length !== b.length) return false;
  for (var i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function start(o, E, runner) {
  cancel(E, "");
  E.result = null; E.attr = null; E.state = "running";
  var job = runner.run(o.signal(), o.start(), function (done, total) { progress(E, done, total); });
  job.of = { signal: Float32Array.from(o.signal()), start: o.start() };
  E.job = job;
  job.promise.then(function (res) {
    if (!res || E.job !== job) return;
    E.result = res; E.runs++; E.state = "done";
    reduce(o, E); status(o, E); o.redraw();
  }).catch(fail);
  o.redraw();
}

function cancel(E, why) {
  if (E.job && !E.job.cancelled && E.state === "running") {
    E.job.cancel(); E.state = "cancelled"; E.cancelled = { job: E.job, at: E.progress.slice() };
    if (why) $("pg-ex-status").textContent = "Explanation " + why + ".";
  }
  E.result = null; E.attr = null;
}

function stop(o, E) {
  cancel(E, "");
  E.state = "off"; $("pg-ex-status").textContent = ""; $("pg-ex-progress").value = 0;
  $("pg-ex-legend").textContent = "";
  o.redraw();
}

// Only the bar and its line change per pass: a redraw of every lane per pass cost the main thread ~25 tasks over
// 50 ms per explanation on 2 loaded cores (make bench, live section).
function progress(E, done, total) {
  E.progress = [done, total];
  if (E.strip) drawProgress(E.strip.g, E.strip.box, done, total);
  $("pg-ex-progress").max = total; $("pg-ex-progress").value = done;
  $("pg-ex-status").textContent = "Explaining: " + done + " of " + total + " model runs (" + workerCount() + " workers)…";
}

// The explained target the controls ask for: {lo, hi, point, stepS} (hi exclusive, as Python's Interval).
export function targetOf(o) {
  var W = o.spec.window, clamp = function (v) { return Math.max(0, Math.min(W - 1, Math.round(+v) || 0)); };
  if ($("pg-ex-target").value === "step") {
    var i = clamp($("pg-ex-step").value);
    return { lo: i, hi: i + 1, point: true, stepS: o.spec.stepS };
  }
  var a = clamp($("pg-ex-from").value), b = clamp($("pg-ex-to").value);
  return { lo: Math.min(a, b), hi: Math.max(a, b) + 1, point: false, stepS: o.spec.stepS };
}

// The stored passes -> the attribution for the selected device and target (no model run).
function reduce(o, E) {
  if (!E.result) return;
  var W = o.spec.window, d = o.spec.devices.indexOf($("pg-ex-device").value), t = targetOf(o), r = E.result;
  var f = r.watts.map(function (w) { return target(w, d, W, t); });
  var values = attribute(f[0], f.slice(1), r.windows, W), vmax = 0;
  for (var i = 0; i < W; i++) vmax = Math.max(vmax, Math.abs(values[i]));
  E.attr = { device: o.spec.devices[d], target: t, unit: t.point ? "W" : "Wh", value: f[0], values: values, vmax: vmax || 1 };
  setLegends($("pg-ex-legend"), [[CMAP, -E.attr.vmax, E.attr.vmax, "attribution by occlusion (" + E.attr.unit + " per step of the aggregate): red raises the " +
              E.attr.device.replace(/_/g, " ") + "'s " + (t.point ? "power" : "energy") + " in the black frame, blue lowers it", 5]]);
  status(o, E);
}

function status(o, E) {
  if (!E.result || !E.attr) return;
  var a = E.attr, what = a.target.point ? "power at step " + a.target.lo : "energy over steps " + a.target.lo + "-" + (a.target.hi - 1);
  $("pg-ex-status").textContent = "Explained in " + (E.result.ms / 1000).toFixed(1) + " s (" + E.result.passes + " model runs, " +
    workerCount() + " workers): the " + a.device.replace(/_/g, " ") + "'s " + what + " is " + a.value.toFixed(1) + " " + a.unit + " for your signal.";
}

function laneOf(o, E) {
  var a = E.attr, t = a ? a.target : targetOf(o), dev = $("pg-ex-device").value.replace(/_/g, " ");
  var what = t.point ? dev + " power at step " + t.lo : dev + " energy, steps " + t.lo + "-" + (t.hi - 1);
  var msg = "waiting for the live model's run of your edit", running = E.state === "running";
  E.strip = null;
  return stripLane({ title: "Why: " + what, unit: (t.point ? "W" : "Wh") + "/step",
                     values: a ? a.values : null, vmax: a ? a.vmax : 1, mark: t, message: msg, progress: running ? E.progress : null,
                     startMs: parseStart(o.start()), stepS: o.spec.stepS,
                     onDraw: function (g, box) { E.strip = a ? null : { g: g, box: box }; } });
}

// Only the inputs the selected target reads are enabled.
function enable() {
  var point = $("pg-ex-target").value === "step";
  $("pg-ex-from").disabled = $("pg-ex-to").disabled = point;
  $("pg-ex-step").disabled = !point;
}

function wireControls(o, E, on) {
  var W = o.spec.window, dev = $("pg-ex-device");
  o.spec.devices.forEach(function (d) {
    var opt = document.createElement("option");
    opt.value = d; opt.textContent = d.replace(/_/g, " "); dev.appendChild(opt);
  });
  ["pg-ex-from", "pg-ex-to", "pg-ex-step"].forEach(function (id) { $(id).max = String(W - 1); });
  $("pg-ex-to").value = String(W - 1); $("pg-ex-step").value = String(Math.floor(W / 2));
  $("pg-ex-method").textContent = o.data.explain.method + ", windows of " + o.data.explain.window + " steps every " +
    o.data.explain.stride + ", baseline " + o.data.explain.baseline;
  ["pg-ex-device", "pg-ex-target", "pg-ex-from", "pg-ex-to", "pg-ex-step"].forEach(function (id) { $(id).onchange = on.changed; });
  $("pg-explain").onchange = on.toggled;
  enable();
  $("pg-canvas").addEventListener("pointerdown", function (e) { pickStep(o, E, e, on.changed); });
}

// A click (or tap) on the strip explains the power at that step, from the passes already made.
function pickStep(o, E, e, changed) {
  var geo = o.geo(), p = E.on && geo && geo.lanes.length > 1 && pointToLane($("pg-canvas"), geo, STRIP_LANE, e.clientX, e.clientY);
  if (!p || !p.inside) return;
  $("pg-ex-target").value = "step"; $("pg-ex-step").value = String(p.step);
  changed();
}

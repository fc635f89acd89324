/* page_playground.js: the Playground page. The reader edits a captured window's aggregate; every edit re-runs
 * NILMFormer live (live_model.js, in a Web Worker), debounced, and the lanes show the per-device watts, the gate
 * probabilities and one head's attention row for the edited signal. While the runtime starts (~1 s), an unedited
 * window shows its outputs from PyTorch at build time (data.firstRun), which the first live run replaces. */
import { palette } from "./colormaps.js";
import { blob, fail, ready } from "./core.js";
import { createLiveModel, exposeLiveModel } from "./live_model.js";
import { parseStart } from "./live_time.js";
import { registerPage, testHook } from "./register.js";
import { stateInUrl } from "./url_state.js";
import { createSignal, parseValues } from "./playground_edit.js";
import { createExplainPanel } from "./playground_explain.js";
import { drawLanes, pointToLane } from "./playground_plot.js";
import { windowClock } from "./time_axis.js";
import { saveSignal } from "./your_signal.js";

var DEBOUNCE_MS = 120;
var FETCH = ["watts", "gate_prob", "attention"];  // gate_prob only for a model with a gate (data.text.gate)

function $(id) { return document.getElementById(id); }

function option(sel, value, text) {
  var o = document.createElement("option");
  o.value = String(value); o.textContent = text; sel.appendChild(o);
}

// The page's payload, its live model and the editing state (set once by start).
var data, spec, W, live, S, EX, colors = palette;

function startISO() { return data.starts[S.startIdx].start; }

function lanes() {
  var sig = S.signal.get(), r = S.result, out = [];
  out.push({ title: "Aggregate, editable (draw here)", unit: "W", series: [
    { name: "captured", values: data.starts[S.startIdx].aggregate, color: "#bbbbbb" },
    { name: "edited", values: sig, color: "#000000" }] });
  var ex = EX.lane(); // the live explanation's strip, under the signal (playground_explain.js)
  if (ex) out.push(ex);
  if (!r) return out;
  var by = r.live ? "live model output" : "PyTorch at build time until the live model runs";
  out.push({ title: data.text.power + " (" + by + ")", unit: "W", negNote: data.text.neg_note,
             series: spec.devices.map(function (d, i) { return { name: d, values: r.watts[d], color: colors[i] }; }) });
  if (data.text.gate) out.push({ title: data.text.gate, unit: "0-1", min: 0, max: 1,
             series: spec.devices.map(function (d, i) { return { name: d, values: r.gate.subarray(i * W, (i + 1) * W), color: colors[i] }; }),
             hlines: spec.thresholds.map(function (t, i) { return { y: t, color: colors[i] }; }) });
  var row = attentionRow(r);
  if (row) out.push({ title: "Attention of query step " + S.query + " over key steps (layer " + S.layer + ", head " + S.head + ")",
             unit: "weight", min: 0, series: [{ name: "attention", values: row, color: colors[0] }], vline: S.query });
  return out;
}

// The attention lane's row: from a live run's maps, or from a build-time run, which has one head and query only.
function attentionRow(r) {
  if (r.attention) return r.attention.subarray((S.layer * W + S.query) * W, (S.layer * W + S.query + 1) * W);
  var f = data.firstRun;
  return S.head === f.head && S.query === f.query ? r.rows.subarray(S.layer * W, (S.layer + 1) * W) : null;
}

// Start window i's outputs from PyTorch at build time (views/playground.py first_runs): float32, per window
// watts (devices x W), gate probabilities (devices x W), the first run's head and query row in every layer.
function firstRun(i) {
  var D = spec.devices.length, G = data.text.gate ? D : 0, n = (D + G + spec.layers) * W, at = i * n;
  var all = new Float32Array(blob(data.firstRun.blob).slice().buffer), watts = {};
  spec.devices.forEach(function (d, j) { watts[d] = all.slice(at + j * W, at + (j + 1) * W); });
  return { watts: watts, gate: all.slice(at + D * W, at + (D + G) * W), rows: all.slice(at + (D + G) * W, at + n),
           signal: Float32Array.from(data.starts[i].aggregate) };
}

function showFirstRun() {
  S.result = firstRun(S.startIdx); S.shown.push("build");
  $("pg-status").textContent = "Outputs from PyTorch at build time; starting the live model…"; // one line: #embed
}

function draw() {
  S.geo = drawLanes($("pg-canvas"), lanes(), W, { label: "time (UTC; one step = " + spec.stepS + " s) from the window start " + startISO() + ": query and key axis of the attention lane",
                                                  clock: windowClock(startISO(), spec.stepS) });
  $("pg-undo").disabled = !S.signal.canUndo();
}

function onResult(res) {
  S.runs++; S.ms.push(res.ms); S.shown.push("live");
  S.result = { live: true, watts: live.perDevice(res.outputs.watts), gate: data.text.gate ? res.outputs.gate_prob.data : null,
               attention: res.outputs.attention.data, ms: res.ms, signal: Float32Array.from(S.signal.get()) };
  $("pg-status").textContent = "Model run " + S.runs + ": " + res.ms.toFixed(0) + " ms in the worker.";
  draw(); ready(); EX.ran();
  window.dispatchEvent(new CustomEvent("nilmbuild:run", { detail: S.runs }));
}

function runNow() { // one run at a time; an edit during a run asks for one more afterwards
  if (S.busy) { S.dirty = true; return; }
  S.busy = true; S.dirty = false;
  var x = live.modelInput(S.signal.get(), startISO());
  var fetch = FETCH.filter(function (k) { return k !== "gate_prob" || data.text.gate; });
  live.run(x, S.head, fetch).then(onResult).catch(fail).then(function () { S.busy = false; if (S.dirty) runNow(); });
}

function edited() { EX.edited(); draw(); keep(); clearTimeout(S.timer); S.timer = setTimeout(runNow, DEBOUNCE_MS); }

// the current edit, for "your signal" on the Attention and Disaggregation pages (your_signal.js)
function keep() {
  var st = data.starts[S.startIdx];
  S.saved = saveSignal(spec, { aggregate: S.signal.get(), start: st.start, label: "your edit of sample " + st.sample + " (" + st.start + " UTC)" });
}

function start(p) {
  data = p.data; spec = data.live; W = spec.window;
  live = exposeLiveModel(createLiveModel(spec)); // the graph: the shared sibling nilmbuild-model.js
  S = { startIdx: 0, signal: createSignal(data.starts[0].aggregate), result: null, runs: 0, ms: [],
        head: data.firstRun.head, layer: 0, query: data.firstRun.query, geo: null, busy: false, dirty: false, timer: 0,
        shown: [] }; // what each drawn result came from, in order: "build" (first_runs) or "live"
  legend(data.text.legend, colors);
  EX = createExplainPanel({ data: data, spec: spec, signal: function () { return S.signal.get(); }, start: startISO, redraw: draw,
                           geo: function () { return S.geo; } });
  wireControls(data, spec, S, edited, draw, runNow);
  wireDrawing(S, edited, draw);
  stateInUrl([["start", "#pg-start"], ["layer", "#pg-layer"], ["head", "#pg-head"], ["t", "#pg-query"]].concat(EX.urlBindings));
  showFirstRun();
  draw(); ready();
  runNow();
  testHook({ playground: S, edited: edited });
}

function legend(labels, colors) {
  var box = $("pg-legend");
  labels.forEach(function (label, i) {
    var row = document.createElement("div"), sw = document.createElement("span");
    sw.style.cssText = "display:inline-block;width:1.4em;height:0.3em;vertical-align:middle;margin-right:0.4em;background:" + colors[i];
    row.appendChild(sw);
    row.appendChild(document.createTextNode(label));
    box.appendChild(row);
  });
}

function stepOf(S, data, spec, hhmm) {
  var t0 = parseStart(data.starts[S.startIdx].start), d = new Date(t0), parts = hhmm.split(":");
  var at = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), +parts[0], +parts[1]);
  if (at < t0) at += 86400000;
  return Math.round((at - t0) / 1000 / spec.stepS);
}

function wireControls(data, spec, S, edited, draw, runNow) {
  var W = spec.window, sel = $("pg-start");
  data.starts.forEach(function (s, i) { option(sel, i, "sample " + s.sample + ", " + s.start + " UTC"); });
  sel.onchange = function () {
    S.startIdx = +sel.value; S.signal.reset(data.starts[S.startIdx].aggregate);
    if (!S.runs) showFirstRun(); // before the first live run, the new window's build-time outputs
    edited();
  };
  var at = $("pg-at");
  at.max = String(W - 1);
  var eight = stepOf(S, data, spec, "08:00");
  at.value = String(eight < W ? eight : Math.floor(W / 2));
  data.palette.forEach(function (ev) {
    var b = document.createElement("button");
    b.type = "button"; b.textContent = ev.label; b.dataset.event = ev.name;
    b.title = ev.watts.length + " steps, peak " + Math.max.apply(null, ev.watts).toFixed(0) + " W (from the simulator's " + ev.name + " model)";
    b.onclick = function () { S.signal.addEvent(+at.value, ev.watts); edited(); };
    $("pg-palette").appendChild(b);
  });
  $("pg-from").max = $("pg-to").max = String(W - 1);
  $("pg-to").value = String(W - 1);
  $("pg-scale").onclick = function () { S.signal.scale(+$("pg-from").value, +$("pg-to").value, +$("pg-factor").value); edited(); };
  $("pg-shift").onclick = function () { S.signal.shift(+$("pg-from").value, +$("pg-to").value, +$("pg-offset").value); edited(); };
  $("pg-paste").placeholder = "paste " + W + " values in watts (commas, spaces or new lines)";
  $("pg-apply").onclick = function () {
    try { S.signal.paste(parseValues($("pg-paste").value)); $("pg-paste-msg").textContent = ""; edited(); }
    catch (e) { $("pg-paste-msg").textContent = e.message; }
  };
  $("pg-reset").onclick = function () { S.signal.reset(); edited(); };
  $("pg-undo").onclick = function () { S.signal.undo(); edited(); };
  for (var h = 0; h < spec.heads; h++) option($("pg-head"), h, "head " + h);
  for (var l = 0; l < spec.layers; l++) option($("pg-layer"), l, "layer " + l);
  $("pg-head").onchange = function () { S.head = +$("pg-head").value; runNow(); };
  $("pg-layer").onchange = function () { S.layer = +$("pg-layer").value; draw(); };
  var q = $("pg-query");
  q.max = String(W - 1); q.value = String(S.query);
  q.oninput = function () { S.query = +q.value; draw(); };
}

function wireDrawing(S, edited, draw) {
  var canvas = $("pg-canvas"), last = null;
  canvas.addEventListener("pointerdown", function (e) {
    var p = S.geo && pointToLane(canvas, S.geo, 0, e.clientX, e.clientY);
    if (!p || !p.inside) return;
    canvas.setPointerCapture(e.pointerId);
    S.signal.draw(p.step, p.value, p.step, p.value, true);
    last = p; draw();
  });
  canvas.addEventListener("pointermove", function (e) {
    if (!last) return;
    var p = pointToLane(canvas, S.geo, 0, e.clientX, e.clientY);
    if (!p) return;
    S.signal.draw(last.step, last.value, p.step, p.value, false);
    last = p; draw();
  });
  var end = function () { if (last) { last = null; edited(); } };
  canvas.addEventListener("pointerup", end);
  canvas.addEventListener("pointercancel", end);
}

registerPage({ slug: "playground", start: start });

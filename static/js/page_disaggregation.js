/* page_disaggregation.js: example windows (capture: the model input, its final power and the target, in W via
 * page().watts; record names from the view, page().data.names) and the stitched day (blob "day":
 * nilmbuild.infer.disaggregate_series), with the split animation, post-processing steps, seams and the metrics
 * table. The page state lives in module variables set once by start(); each build, draw and on function does one job.
 */
import { decode as unpack } from "@msgpack/msgpack";
import { registerPage, testHook } from "./register.js";
import { disaggSignal } from "./whatif_signal_disagg.js";
import { stateInUrl } from "./url_state.js";
import { animate, blob, controls, fmt, inTasks, ready, saveButton, tooltip } from "./core.js";
import { decode } from "./decode.js";
import { lanes } from "./disaggregation_lanes.js";
import { deviceColors, watts } from "./disaggregation_watts.js";
import { stepTime, windowClock } from "./time_axis.js";

var NO_DAY = { shape: [0, 0], post_steps: [], post: {}, aggregate_w: new Uint8Array(4), valid: new Uint8Array(1), devices: [] };
var STEP_FLAG = { short_w: "short_removed", long_off_w: "off_suppressed" };

function f32(bytes) { var c = bytes.slice(); return new Float32Array(c.buffer, 0, c.byteLength / 4); }
function u8(bytes) { return new Uint8Array(bytes); }

/* ---------- the page's state (one page per document; set by start) ---------- */
var PG, N, cap, day, hasDay, devices, samples, C, Lw, Ld, canvas, readoutEl, st, view;
var noTruth = {}, stepFlag = {}, dayArr = null;
var ui = {};   // mode, sample and step selects, play button
var ds = null; // "your signal": the Playground's edit through the live model (whatif_signal_disagg.js)

// devices with no channel in the data: no truth line, no metrics, and a label that says so
function laneName(d) { return noTruth[d] ? d + " (no ground truth in this data)" : d; }
function dayArrays() {   // the day blob's arrays as typed arrays; post-processing flags per step
  var out = { agg: f32(day.aggregate_w), valid: u8(day.valid), truth: day.truth_w ? f32(day.truth_w) : null, post: {}, flags: {} };
  day.post_steps.forEach(function (s) { out.post[s.key] = f32(day.post[s.key]); });
  Object.keys(day.post_flags || {}).forEach(function (k) { out.flags[k] = u8(day.post_flags[k]); });
  stepFlag = Object.assign({}, STEP_FLAG);
  if (day.cap_binds) {                  // the cap binds per step (T,): mark it on every device's lane
    var cb = u8(day.cap_binds), all = new Uint8Array(cb.length * day.devices.length);
    for (var di = 0; di < day.devices.length; di++) all.set(cb, di * cb.length);
    out.flags.cap_binds = all;
    stepFlag.final_w = "cap_binds";
  }
  return out;
}

/* ---------- the lanes: one example window, or the stitched day at a post-processing step ---------- */
function windowOpts(b) {
  var agg = watts.inverse("aggregate", cap.get(N.input).subarray(b * C * Lw, b * C * Lw + Lw));
  return {
    agg: agg, aggName: "aggregate (input, W)", clock: windowClock(cap.meta.t0[b], PG.model.step_minutes * 60),
    xLabel: "time (UTC) · window #" + samples[b] + " from " + String(cap.meta.t0[b]).slice(0, 16).replace("T", " ") + " UTC",
    devices: devices.map(function (d, i) {
      return { name: laneName(d), color: deviceColors[i % 5],
               pred: watts.inverse(d, watts.row(cap, N.output, b, i)),
               truth: noTruth[d] ? null : watts.inverse(d, watts.row(cap, N.target, b, i)) };
    }),
  };
}
function dayOpts() {
  var key = day.post_steps[st.step].key, P = dayArr.post[key], flag = dayArr.flags[stepFlag[key]];
  var R = st.step > 0 ? dayArr.post[day.post_steps[0].key] : null;   // raw stitched, for before/after
  return {
    agg: dayArr.agg, aggName: "aggregate (W)", clock: windowClock(day.t_start, day.step_s),
    xLabel: "time (UTC) from " + day.t_start.replace("T", " ") + " · dashed: seq2subseq seams (every " + day.geometry.centre + " samples)",
    seams: day.seams, centres: day.centres, valid: dayArr.valid, invalid: true,
    marksLabel: key === "final_w" ? "devices scaled down here: their sum exceeded the aggregate" : null,
    legendExtra: (R ? [["raw stitched (before)", "#6e7781", "dot"]] : []).concat(flag ? [[key === "final_w" ? "scaled down: the sum exceeded the aggregate" : "zeroed by this step", "#D55E00", "box"]] : []),
    devices: day.devices.map(function (d, i) {
      return { name: laneName(d), color: deviceColors[i % 5], pred: P.subarray(i * Ld, (i + 1) * Ld),
               truth: dayArr.truth && !noTruth[d] ? dayArr.truth.subarray(i * Ld, (i + 1) * Ld) : null,
               marks: flag ? flag.subarray(i * Ld, (i + 1) * Ld) : null,
               before: R ? R.subarray(i * Ld, (i + 1) * Ld) : null };
    }),
  };
}
function remake() {   // lanes keeps opts by closure: recreate it when the data change
  var o = st.mode === "signal" ? ds.opts() : st.mode === "window" ? windowOpts(st.sample) : dayOpts();
  var cur = view.cursor, lane = view.lane;
  view = lanes.create(canvas, o); view.cursor = cur; view.lane = lane;
  view.draw(st.split);
  if (cur !== null) showReadout(lane, cur);
}
function showReadout(lane, i, clientX, clientY) {
  var o = view.opts, lines = ["time = " + stepTime(o.clock, i), "aggregate: " + fmt(o.agg[i], 5) + " W"];
  if (lane > 0) {
    var d = o.devices[lane - 1];
    lines.push(d.name + " predicted: " + fmt(d.pred[i], 5) + " W");
    if (d.truth) lines.push(d.name + " truth: " + fmt(d.truth[i], 5) + " W");
    if (d.before) lines.push(d.name + " raw stitched: " + fmt(d.before[i], 5) + " W");
    if (d.marks && d.marks[i]) lines.push(o.marksLabel || "zeroed by this post-processing step");
  } else {
    var s = 0; o.devices.forEach(function (dd) { s += Math.max(0, dd.pred[i]); });
    lines.push("sum of predictions: " + fmt(s, 5) + " W");
  }
  readoutEl.textContent = lines.join(" · ");
  readoutEl.dataset.lane = lane; readoutEl.dataset.index = i;
  if (clientX !== undefined) tooltip.show(lines.join("\n"), clientX, clientY, function () { if (i < view.opts.agg.length) showReadout(lane, i, clientX, clientY); });
}

/* ---------- pointer and keyboard ---------- */
function onMove(e) {
  var r = canvas.getBoundingClientRect(), h = view.hit(e.clientX - r.left, e.clientY - r.top);
  if (!h || st.split < 1) { tooltip.hide(); return; }
  view.cursor = h.index; view.lane = h.lane; view.draw(1); showReadout(h.lane, h.index, e.clientX, e.clientY);
}
function onKey(e) {
  var n = view.opts.agg.length, i = view.cursor === null ? 0 : view.cursor, lane = view.lane, step = e.shiftKey ? 30 : 1;
  if (e.key === "ArrowRight") i = Math.min(n - 1, i + step); else if (e.key === "ArrowLeft") i = Math.max(0, i - step);
  else if (e.key === "ArrowDown") lane = Math.min(view.opts.devices.length, lane + 1); else if (e.key === "ArrowUp") lane = Math.max(0, lane - 1);
  else if (e.key === "Home") i = 0; else if (e.key === "End") i = n - 1; else return;
  e.preventDefault(); view.cursor = i; view.lane = lane; view.draw(1);
  var c = view.cellCenter(lane, i), r = canvas.getBoundingClientRect();
  showReadout(lane, i, r.left + c.x, r.top + c.y);
}
function buildPointer() {
  canvas.tabIndex = 0;
  canvas.addEventListener("mousemove", onMove);
  canvas.addEventListener("mouseleave", function () { tooltip.hide(); });
  canvas.addEventListener("keydown", onKey);
  canvas.addEventListener("blur", function () { tooltip.hide(); });
}

/* ---------- controls ---------- */
function onMode(v) {
  st.mode = v; ui.sampleSel.disabled = v !== "window"; ui.stepSel.disabled = v !== "day"; ui.playBtn.disabled = false;
  document.getElementById("metrics-box").hidden = v !== "day"; ds.when(v, remake, readoutEl, emptyState);
}
function emptyState(message) {   // "your signal" with no edit: the message takes the chart's place (not under an old chart)
  var box = document.getElementById("signal-empty");
  if (!box && message === null) return;
  if (!box) {
    box = document.createElement("div"); box.id = "signal-empty"; box.className = "nb-empty"; box.setAttribute("role", "status");
    canvas.parentNode.insertBefore(box, canvas);
  }
  box.textContent = message || ""; box.hidden = message === null; canvas.style.display = message === null ? "" : "none";   // .nb-canvas sets display
}
function onPlay() {
  if (st.anim) { st.anim.cancel(); return; }
  ui.playBtn.textContent = "Skip animation";
  st.anim = animate(2200, function (t) { st.split = t < 0.15 ? 0 : (t - 0.15) / 0.85; view.draw(st.split); }, function () {
    st.anim = null; st.split = 1; view.draw(1); ui.playBtn.textContent = "Play split";
  });
}
function buildControls() {
  var ctl = document.getElementById("nb-controls");
  ui.modeSel = controls.select(ctl, "View", [{ value: "window", label: "example window (" + Lw * PG.model.step_minutes + " min)" }, { value: "day", label: "full day, stitched" }, ds.option], "window", onMode);
  ui.modeSel.id = "mode";
  if (!hasDay) { ui.modeSel.disabled = true; ui.modeSel.title = document.getElementById("day-error").textContent; }
  ui.sampleSel = controls.select(ctl, "Window", samples.map(function (s, i) { return { value: i, label: "#" + s + (cap.meta.t0 ? " · " + String(cap.meta.t0[i]).slice(5, 16).replace("T", " ") : "") }; }), 0, function (v) {
    st.sample = Number(v); remake();
  });
  ui.sampleSel.id = "sample";
  ui.stepSel = controls.select(ctl, "Post-processing", (hasDay ? day.post_steps : [{ label: "(no day)" }]).map(function (s, i) { return { value: i, label: (i + 1) + ". " + s.label }; }), st.step, function (v) {
    st.step = Number(v); remake();
  });
  ui.stepSel.id = "post-step"; ui.stepSel.disabled = true;
  ui.playBtn = controls.button(ctl, "Play split", onPlay);
  ui.playBtn.id = "play-split";
  ui.playBtn.title = "Animate the aggregate splitting into the predicted device powers";
  saveButton(ctl, canvas, "nilmformer-disaggregation.png", function () { view.draw(st.split); });
}

/* ---------- metrics table (day span) ---------- */
function metricRow(names, d, i, label, metrics, k) {
  var tr = document.createElement("tr"), m = metrics[d] || {};
  [k === 0 ? d.replace("_", " ") : "", label].concat(names.map(function (n) { return m[n] === null || m[n] === undefined ? "–" : fmt(m[n], 4); })).forEach(function (t, j) {
    var td = document.createElement(j === 0 ? "th" : "td"); td.textContent = t; if (j === 0) td.scope = "row";
    if (j === 0) td.style.color = deviceColors[i % 5]; tr.appendChild(td);
  });
  if (k === 1) tr.className = "nb-muted";
  return tr;
}
function buildMetrics() {
  var names = JSON.parse(document.getElementById("metrics-box").dataset.metrics);
  var thead = document.querySelector("#metrics thead tr"), tbody = document.querySelector("#metrics tbody");
  ["device", "output"].concat(names).forEach(function (m) { var th = document.createElement("th"); th.textContent = m === "mae" || m === "rmse" ? m.toUpperCase() + " (W)" : m.toUpperCase(); thead.appendChild(th); });
  day.devices.forEach(function (d, i) {
    [["post-processed", day.metrics], ["raw", day.raw_metrics]].forEach(function (pair, k) {
      if (pair[1]) tbody.appendChild(metricRow(names, d, i, pair[0], pair[1], k));
    });
  });
  if (hasDay && !day.metrics) document.getElementById("metrics-note").textContent = "This span has no ground truth: no metrics.";
}

function load(pg) {   // the blobs, the sizes and the first state
  PG = pg; N = pg.data.names; cap = decode(blob("capture"));
  hasDay = pg.blobs.indexOf("day") >= 0;
  day = hasDay ? unpack(blob("day")) : NO_DAY;
  var units = unpack(blob("units"));
  devices = cap.meta.devices; samples = cap.meta.samples;
  (units.no_truth || []).concat(day.no_truth || []).forEach(function (d) { noTruth[d] = true; });
  var inRec = cap.record(N.input);
  C = inRec.shape[1]; Lw = inRec.shape[2]; Ld = day.shape[1];
  canvas = document.getElementById("lanes"); readoutEl = document.getElementById("readout");
  st = { mode: "window", sample: 0, step: day.post_steps.length - 1, anim: null, split: 1 };
  dayArr = dayArrays();
}
function start(pg) {
  // a few tasks instead of one long one while loading (core.inTasks)
  inTasks([
    function () { load(pg); },
    function () { view = lanes.create(canvas, windowOpts(0)); buildPointer(); ds = disaggSignal(pg.data.live); buildControls(); },
    buildMetrics,
    function () {
      view.draw(1);
      stateInUrl([["view", ui.modeSel], ["sample", ui.sampleSel], ["step", ui.stepSel]]);
      ready();
      testHook({ state: st, view: function () { return view; }, yourSignal: ds });
    },
  ]);
}

registerPage({ slug: "disaggregation", start: start });

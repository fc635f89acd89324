/* page_data.js: the preprocessing figures of the Data page, from the "data" blob (nilmbuild/site/views/data.py). */
import { decode as unpack } from "@msgpack/msgpack";
import { registerPage, testHook } from "./register.js";
import { stateInUrl } from "./url_state.js";
import { palette } from "./colormaps.js";
import { FONT_FAMILY, blob, context2d, controls, fmt, inTasks, onResize, ready, saveButton } from "./core.js";
import { deviceColors } from "./disaggregation_watts.js";
import { plot2d } from "./plot2d.js";

var FONT = FONT_FAMILY;

function f32(b) { var c = b.slice(); return new Float32Array(c.buffer, 0, c.byteLength / 4); }
function i32(b) { var c = b.slice(); return new Int32Array(c.buffer, 0, c.byteLength / 4); }
function pretty(name) { return name.replace(/_/g, " "); }
function clock(startIso, minutes) {
  var d = new Date(startIso.replace(/Z?$/, "Z").replace(" ", "T"));
  d = new Date(d.getTime() + minutes * 60000);
  return d.toISOString().slice(0, 16).replace("T", " ");
}
function figButton(barId, canvas, name, redraw) { saveButton(document.getElementById(barId), canvas, name, redraw); }

// The decoded blob and the arrays every figure shares (set once by start).
var D, S;

function series(D) {
  var n = D.resampled.n, rawT = i32(D.raw.t);
  var rawH = new Float64Array(rawT.length); for (var i = 0; i < rawT.length; i++) rawH[i] = rawT[i] / 3600;
  var resH = new Float64Array(n); for (var j = 0; j < n; j++) resH[j] = (j * D.step_s) / 3600;
  return {
    devs: D.devices, n: n, stepMin: D.step_s / 60, rawH: rawH, resH: resH, spanH: (n * D.step_s) / 3600,
    rawAgg: f32(D.raw.aggregate_w), resAgg: f32(D.resampled.aggregate_w), resApps: f32(D.resampled.appliances_w),
    states: new Uint8Array(D.resampled.states),
    // hours from the start, labelled in clock time (UTC)
    xAxis: function (min, max) { return { label: "time from " + D.start.slice(0, 16).replace("T", " "), unit: "UTC", readout: "time", min: min, max: max, clock: { start: Date.parse(D.start.replace(/Z?$/, "Z")), per: 3600000 } }; },
  };
}

// ---- 1. raw vs resampled ----
function buildRawFigure() {
  var rawCanvas = document.getElementById("raw-plot");
  document.getElementById("raw-caption").textContent = "The aggregate at the meter's native rate (every " + D.native_rate_s + " s, thin line) and the mean of each " +
    S.stepMin + "-minute bin (step line) that the model sees; the dashed line is the dataset's cut-off (" + D.cutoff_w + " W) above which the aggregate is clipped. Zoom into an hour to see the averaging.";
  var rawPlot = plot2d.create(rawCanvas, {
    title: "Aggregate power, " + D.start.slice(0, 16).replace("T", " ") + " + 24 h", x: S.xAxis(0, S.spanH),
    lanes: [{ y: { label: "power", unit: "W", min: 0 }, series: [
      { name: "raw, every " + D.native_rate_s + " s", x: S.rawH, y: S.rawAgg, kind: "line", color: "#56B4E9", width: 1 },
      { name: S.stepMin + "-min mean (model input)", x: S.resH, y: S.resAgg, kind: "step", color: "#0072B2", width: 1.6 },
      { name: "cut-off " + D.cutoff_w + " W", x: [0, S.spanH], y: [D.cutoff_w, D.cutoff_w], kind: "line", color: "#D55E00", dash: [6, 4], width: 1.5 },
    ] }],
  });
  rawPlot.draw();
  plot2d.hover(rawPlot);
  buildRawZoom(rawPlot);
  figButton("raw-controls", rawCanvas, "data-raw-vs-resampled.png", rawPlot.draw);
  return rawPlot;
}

function buildRawZoom(rawPlot) {
  var zoomOpts = [{ value: "day", label: "whole span (24 h)" }];
  for (var h = 0; h < Math.floor(S.spanH); h++) zoomOpts.push({ value: String(h), label: "1 h from " + clock(D.start, h * 60).slice(11) });
  controls.select(document.getElementById("raw-controls"), "Zoom", zoomOpts, "day", function (v) {
    var x = v === "day" ? { min: 0, max: S.spanH } : { min: Number(v), max: Number(v) + 1 };
    rawPlot.opts.x.min = x.min; rawPlot.opts.x.max = x.max; rawPlot.draw();
  }).id = "raw-zoom";
}

// ---- 2. appliances and states ----
function buildStatesFigure() {
  var stCanvas = document.getElementById("states-plot");
  var lanes = S.devs.map(function (d, k) {
    var y = S.resApps.subarray(k * S.n, (k + 1) * S.n), thr = D.thresholds_w[d];
    return { title: pretty(d) + " (ON > " + thr + " W)", y: { label: pretty(d), unit: "W", min: 0 }, height: 1, flat: "off all day", series: [
      { name: "power (1 min)", x: S.resH, y: y, kind: "area", color: deviceColors ? deviceColors[k] : palette[k] },
      { name: "ON threshold", x: [0, S.spanH], y: [thr, thr], kind: "line", color: "#1b1f24", dash: [5, 3], width: 1 },
    ] };
  });
  var stPlot = plot2d.create(stCanvas, { x: S.xAxis(0, S.spanH), lanes: lanes, legend: false });
  var baseDraw = stPlot.draw;
  stPlot.draw = function () { baseDraw(); drawOnBands(stPlot, stCanvas); return stPlot; };
  stPlot.draw();
  plot2d.hover(stPlot);
  figButton("states-controls", stCanvas, "data-states.png", stPlot.draw);
  return stPlot;
}

function drawOnBands(stPlot, stCanvas) { // the ON states as a light tint over each device's lane
  var ctx = context2d(stCanvas), L = stPlot.layout, n = S.n;
  ctx.save();
  S.devs.forEach(function (d, k) {
    var box = L.lanes[k]; ctx.fillStyle = "rgba(0,158,115,0.16)";
    var s = S.states.subarray(k * n, (k + 1) * n), a = -1;
    for (var t = 0; t <= n; t++) {
      var on = t < n && s[t];
      if (on && a < 0) a = t;
      if (!on && a >= 0) { var x0 = stPlot.xToPx(S.resH[a]), x1 = stPlot.xToPx(t < n ? S.resH[t] : S.spanH); ctx.fillRect(x0, box.y + 1, Math.max(1, x1 - x0), box.height - 2); a = -1; }
    }
  });
  ctx.restore();
}

// ---- 3. scaling table ----
function buildScalingTable() {
  var tb = document.querySelector("#scaling-table tbody");
  function params(sc) { return Object.keys(sc).filter(function (k) { return k !== "kind"; }).map(function (k) { return k + " = " + fmt(sc[k], 6); }).join(", "); }
  function row(cells) { var tr = document.createElement("tr"); cells.forEach(function (c) { var td = document.createElement("td"); td.textContent = c; tr.appendChild(td); }); tb.appendChild(tr); }
  row(["aggregate", D.scalers.aggregate.kind, params(D.scalers.aggregate), "–", "–", "–", "–", fmt(D.stats.aggregate_kwh, 4)]);
  S.devs.forEach(function (d) {
    var sc = D.scalers.appliances[d];
    row([pretty(d), sc.kind, params(sc), fmt(D.thresholds_w[d]), String(D.min_on_steps[d] * S.stepMin), String(D.min_off_steps[d] * S.stepMin),
         fmt(D.stats.on_fraction[d], 3), fmt(D.stats.energy_kwh[d], 4)]);
  });
  document.getElementById("scaling-caption").textContent = "Scaler kind \"" + D.scaler_kind + "\" (spec §2.2: max, standard, minmax or mean), fitted on the train split only and stored in the checkpoint; " +
    "the model's inputs and targets are in these scaled units. Thresholds and minimum durations label the ON states; ON fraction and energy are over the whole prepared span.";
}

// ---- 4. timeline: the splits over all data, then the shown day's windows ----
var SPLIT_COL = { train: "#0072B2", val: "#E69F00", test: "#009E73" };

function drawTimeline() {
  var tl = document.getElementById("timeline"), c = context2d(tl);
  var dpr = window.devicePixelRatio || 1, W = tl.clientWidth, H = tl.clientHeight;
  tl.width = Math.round(W * dpr); tl.height = Math.round(H * dpr);
  c.setTransform(dpr, 0, 0, dpr, 0, 0); c.fillStyle = "#fff"; c.fillRect(0, 0, W, H);
  c.font = "12px " + FONT; c.textBaseline = "middle";
  var g = { x0: 70, x1: W - 14, total: D.splits.total_bins, y2: 100 };
  g.bx = function (b) { return g.x0 + (b / g.total) * (g.x1 - g.x0); };
  g.dayX = function (bin) { return g.x0 + (bin / S.n) * (g.x1 - g.x0); };
  drawSplitBar(c, g);
  drawShownDay(c, g);
  var yl = drawDayWindows(c, g);
  drawHourTicks(c, g, yl);
}

function drawSplitBar(c, g) {
  var pc = document.createElement("canvas"); pc.width = 8; pc.height = 8; var pcx = context2d(pc); // hatch: gaps
  pcx.strokeStyle = "#8c959f"; pcx.beginPath(); pcx.moveTo(0, 8); pcx.lineTo(8, 0); pcx.stroke();
  c.fillStyle = c.createPattern(pc, "repeat"); c.fillRect(g.x0, 30, g.x1 - g.x0, 26);
  ["train", "val", "test"].forEach(function (s) {
    var b = D.splits.bins[s]; if (!b) return;
    c.fillStyle = SPLIT_COL[s]; c.fillRect(g.bx(b[0]), 30, Math.max(1, g.bx(b[1]) - g.bx(b[0])), 26);
    c.fillStyle = "#fff"; c.textAlign = "center";
    var label = s + " · " + (D.splits.windows ? D.splits.windows[s] + " windows" : "");
    if (g.bx(b[1]) - g.bx(b[0]) > c.measureText(label).width + 8) c.fillText(label, (g.bx(b[0]) + g.bx(b[1])) / 2, 43);
  });
  c.strokeStyle = "#57606a"; c.strokeRect(g.x0 + 0.5, 30.5, g.x1 - g.x0 - 1, 26);
  c.fillStyle = "#1b1f24"; c.textAlign = "right"; c.fillText("all data", g.x0 - 6, 43);
  c.textAlign = "left"; c.fillStyle = "#57606a";
  c.fillText(D.splits.span[0].replace("T", " ") + "  (" + g.total + " bins of " + S.stepMin + " min; hatched: leakage gaps of " + D.gap_windows + " window = " + D.gap_windows * D.window + " bins)", g.x0, 14);
  c.textAlign = "right"; c.fillText(D.splits.span[1].replace("T", " "), g.x1, 70);
}

function drawShownDay(c, g) { // where the shown day sits: the test split's first bin + offset of the day start
  var tb0 = D.splits.bins.test ? D.splits.bins.test[0] : 0, dayOff = D.day_offset_bins || 0;
  var dx0 = g.bx(tb0 + dayOff), dx1 = g.bx(tb0 + dayOff + S.n);
  c.strokeStyle = "#1b1f24"; c.lineWidth = 2; c.strokeRect(dx0, 27, Math.max(2, dx1 - dx0), 32); c.lineWidth = 1;
  c.strokeStyle = "#afb8c1"; c.beginPath(); c.moveTo(dx0, 59); c.lineTo(g.x0, g.y2 - 6); c.moveTo(dx1, 59); c.lineTo(g.x1, g.y2 - 6); c.stroke();
  c.fillStyle = "#1b1f24"; c.textAlign = "right"; c.fillText("shown day", g.x0 - 6, g.y2 + 8);
}

function drawDayWindows(c, g) { // windows of the day, in rows by overlap -> y of the caption below them
  var rows = Math.max(1, Math.ceil(D.window / D.eval_stride)), rh = 18;
  D.windows.forEach(function (w, k) {
    var r = k % rows, y = g.y2 + r * (rh + 4), a = g.dayX(Math.max(0, w.start)), b = g.dayX(Math.min(S.n, w.start + D.window));
    c.fillStyle = w.example ? "#009E73" : "#fff"; c.strokeStyle = "#009E73"; c.lineWidth = 1.5;
    c.fillRect(a, y, b - a, rh); c.strokeRect(a + 0.5, y + 0.5, b - a - 1, rh - 1);
    c.fillStyle = w.example ? "#fff" : "#1b1f24"; c.textAlign = "left";
    c.fillText(clock(D.start, w.start * S.stepMin).slice(11) + (b - a > 120 ? " · " + D.window + " min" : ""), a + 5, y + rh / 2);
  });
  var yl = g.y2 + rows * (rh + 4) + 14;
  c.fillStyle = "#57606a"; c.textAlign = "left";
  c.fillText("window " + D.window + " min, stride " + D.eval_stride + " min (val/test; train stride " + D.stride + " min): consecutive windows overlap by " + Math.max(0, D.window - D.eval_stride) + " min", g.x0, yl);
  return yl;
}

function drawHourTicks(c, g, yl) {
  c.textAlign = "center";
  for (var hh = 0; hh <= S.spanH; hh += 3) { var x = g.dayX((hh * 3600) / D.step_s); c.fillText(clock(D.start, hh * 60).slice(11), x, yl + 20); }
}

function buildTimeline() {
  var tl = document.getElementById("timeline");
  drawTimeline();
  onResize(tl, drawTimeline);
  figButton("timeline-controls", tl, "data-splits-windows.png", drawTimeline);
}

// ---- 5. time features ----
function featLanes(X, C, Lw, b) {
  var base = b * C * Lw;
  var out = [{ title: "channel 0: aggregate (scaled)", y: { label: "ch 0", unit: "" }, height: 1.4, series: [{ name: "aggregate (scaled)", y: X.subarray(base, base + Lw), kind: "line", color: "#1b1f24" }] }];
  D.time_features.forEach(function (f, k) {
    out.push({ title: "channel " + (k + 1) + ": " + f, y: { label: "ch " + (k + 1), unit: "", min: -1.05, max: 1.05 }, series: [{ name: f, y: X.subarray(base + (k + 1) * Lw, base + (k + 2) * Lw), kind: "line", color: palette[Math.floor(k / 2)], dash: k % 2 ? [5, 3] : null }] });
  });
  return out;
}

function buildFeaturesFigure() {
  var fCanvas = document.getElementById("features-plot"), ex = D.example, X = f32(ex.x), C = ex.shape[1], Lw = ex.shape[2];
  var fPlot = plot2d.create(fCanvas, { x: { label: "minute in window", unit: "min", min: 0, max: Lw - 1 }, lanes: featLanes(X, C, Lw, 0), legend: false,
    title: "Example window 0 from " + ex.t0[0].replace("T", " ") });
  fPlot.draw();
  plot2d.hover(fPlot);
  controls.select(document.getElementById("features-controls"), "Example window", ex.t0.map(function (t, i) { return { value: i, label: "#" + i + " · " + t.slice(0, 16).replace("T", " ") }; }), 0, function (v) {
    var b = Number(v); fPlot.update({ lanes: featLanes(X, C, Lw, b), title: "Example window " + b + " from " + ex.t0[b].replace("T", " ") });
  }).id = "feature-sample";
  figButton("features-controls", fCanvas, "data-time-features.png", fPlot.draw);
  return fPlot;
}

function start() {
  // one figure per task (core.inTasks): no long task while loading
  var plots = {};
  inTasks([
    function () { D = unpack(blob("data")); S = series(D); },
    function () { plots.raw = buildRawFigure(); },
    function () { plots.states = buildStatesFigure(); },
    function () { buildScalingTable(); buildTimeline(); },
    function () { plots.features = buildFeaturesFigure(); },
    function () {
      testHook({ plots: plots });
      stateInUrl([["zoom", "#raw-zoom"], ["window", "#feature-sample"]]);
      ready();
    },
  ]);
}

registerPage({ slug: "data", start: start });

/* page_embedding.js: the embedding page (architecture.md 5, forward-pass.md stages 1-4).
 * Views: input channels + instance norm (plot2d); receptive field tree on the real signal (Canvas2D, tap
 * weights from the checkpoint's conv weights in the "extra" blob); feature maps as heatmap2d.js grids on one 2D
 * canvas (no WebGL context to create: 100-300 ms of a load in software GL), with a 2D label overlay. Shapes come
 * from the capture records, record names from the view (page().data.names, nilmbuild/site/views/embedding.py).
 * The page state lives in module variables set once by run(); each build, draw and on function does one job.
 */
import { registerPage, testHook } from "./register.js";
import { stateInUrl } from "./url_state.js";
import { palette, setLegends } from "./colormaps.js";
import { controls, fmt, inTasks, newTask, ready } from "./core.js";
import { kit } from "./film_kit.js";
import { fitCanvas, hoverGrid } from "./grid.js";
import { clear2d, heatmap2d } from "./heatmap2d.js";
import { plot2d } from "./plot2d.js";
import { stepTicks, stepTime } from "./time_axis.js";

var ZOOM = 40;   // receptive-field view: steps shown either side of t
var LM = 150, TOP = 18, GAP = 30;   // feature maps: left margin, top, gap between maps (CSS px)
var GROUP_LABEL = { embed: "ResUnit outputs, + pos. enc. (value)", pos: "positional encoding (value)", proj: "projection (value)" };

function f32(bytes) { var b = bytes.slice(); return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4); }

/* ---------------- the page's state (one page per document; set by run) ---------------- */
var N, cap, extra, C, L, units, nUnits, resNames, Cemb, rf, state, aggW;
var ui = {};   // the t slider and channel select
var el = {};   // canvases: input, rf, maps (WebGL), overlay, stack
var inputPlot = null, mapDefs = [], hms = [], boxes = [], lastCell = null, mapTicks = [];

/* ---------------- view 1: input channels ---------------- */
function channel(a, k) { return a.subarray(k * L, (k + 1) * L); }
function calendarSeries(a) {   // channels 1 .. C-1 as plot2d series
  var names = extra.channel_names || [], out = [];
  for (var k = 1; k < C; k++) out.push({ name: names[k] || "channel " + k, y: channel(a, k), kind: "line", color: palette[k % 7], width: 1.25 });
  return out;
}
function drawInput() {
  var i = state.sample, x = cap.slice(N.input, i), z = cap.slice(N.instance_norm, i);
  var opts = {
    title: "input (B, " + C + ", " + L + ") and " + N.instance_norm + " · " + kit.sampleLabel(extra, i),
    x: kit.timeAxis(extra, i, L),
    lanes: [
      { title: "channel 0: aggregate", y: { label: "aggregate", unit: aggW.unit },
        series: [{ name: "aggregate", y: kit.mapArray(channel(x, 0), aggW.f), kind: "area", color: palette[0], width: 1 }] },
      { title: "channels 1–" + (C - 1) + ": calendar features", y: { label: "value", min: -1.05, max: 1.05 }, series: calendarSeries(x) },
      { title: "instance-normalised aggregate", y: { label: "z-score" },
        series: [{ name: "aggregate", y: channel(z, 0), kind: "line", color: palette[0], width: 1.25 }] },
      { title: "instance-normalised calendar features", y: { label: "z-score" }, series: calendarSeries(z) },
    ],
  };
  if (!inputPlot) { inputPlot = plot2d.create(el.input, opts); plot2d.hover(inputPlot); }
  else inputPlot.opts = opts;
  inputPlot.setCursor(state.t);
}

/* ---------------- view 2: receptive field ---------------- */
// tap strength of unit u at tap k: ||W[c, :, k]|| for the selected output channel (top unit), ||W[:, :, k]|| below
function tapNorm(u, k, cOut) {
  var U = units[u], co = U.shape[0], ci = U.shape[1], K = U.shape[2], s = 0;
  for (var o = 0; o < co; o++) {
    if (cOut !== null && o !== cOut) continue;
    for (var j = 0; j < ci; j++) { var v = U.w[(o * ci + j) * K + k]; s += v * v; }
  }
  return Math.sqrt(cOut !== null ? s : s / co);
}
function rfGeometry(W, H) {   // row r = 0 (top) is the last unit's output; row nUnits (bottom) the normalised aggregate
  var m = { l: 150, r: 16, t: 14, b: 34 }, rows = nUnits + 1, rh = (H - m.t - m.b) / rows, pw = W - m.l - m.r;
  var x0 = state.t - ZOOM, x1 = state.t + ZOOM;
  var rowY = function (r) { return m.t + r * rh; };
  return { W: W, H: H, m: m, rows: rows, rh: rh, pw: pw, x0: x0, x1: x1, rowY: rowY,
           X: function (tt) { return m.l + ((tt - x0) / (x1 - x0)) * pw; },
           yOf: function (r, v, lo, hi) { return rowY(r) + rh * 0.12 + (1 - (v - lo) / (hi - lo || 1)) * rh * 0.62; } };
}
function rfSignals(rows) {   // each row's signal (the selected channel of a ResUnit output, or the normalised aggregate)
  var i = state.sample, sig = [], name = [];
  for (var r = 0; r < rows; r++) {
    var uIdx = nUnits - 1 - r;
    if (uIdx >= 0) { sig.push(cap.slice(resNames[uIdx], i).subarray(state.ch * L, (state.ch + 1) * L)); name.push(resNames[uIdx]); }
    else { sig.push(cap.slice(N.instance_norm, i).subarray(0, L)); name.push(N.instance_norm); }
  }
  return { sig: sig, name: name };
}
function rfTaps() {   // tap positions per row: row 0 = {t}; row r+1 = row r + k*d of unit (nUnits-1-r); and the edges
  var taps = [[state.t]], edges = [];
  for (var r = 0; r < nUnits; r++) {
    var U = units[nUnits - 1 - r], next = {}, list = [];
    taps[r].forEach(function (p) {
      for (var k = 0; k < U.k; k++) {
        var q = p + (k - (U.k - 1) / 2) * U.d;
        edges.push({ r: r, from: p, to: q, k: k, u: nUnits - 1 - r });
        if (!next[q]) { next[q] = 1; list.push(q); }
      }
    });
    taps.push(list.sort(function (a, b) { return a - b; }));
  }
  return { taps: taps, edges: edges };
}
function rfRanges(sig, geo) {   // per-row ranges over the zoomed span
  return sig.map(function (s) {
    var lo = Infinity, hi = -Infinity;
    for (var tt = Math.max(0, geo.x0); tt <= Math.min(L - 1, geo.x1); tt++) { lo = Math.min(lo, s[tt]); hi = Math.max(hi, s[tt]); }
    return [lo, hi];
  });
}
function drawRFRows(g, geo, taps, rowName) {   // receptive-field shading + row labels
  var X = geo.X, rowY = geo.rowY, rh = geo.rh;
  for (var r = 0; r < geo.rows; r++) {
    var span = taps[r], a = span[0], b = span[span.length - 1];
    g.fillStyle = r === 0 ? "rgba(213,94,0,0.10)" : "rgba(0,114,178,0.08)";
    g.fillRect(X(a - 0.5), rowY(r) + 2, X(b + 0.5) - X(a - 0.5), rh - 4);
    g.strokeStyle = "#e6e9ed"; g.beginPath(); g.moveTo(geo.m.l, rowY(r) + rh - 0.5); g.lineTo(geo.W - geo.m.r, rowY(r) + rh - 0.5); g.stroke();
    g.fillStyle = "#1b1f24"; g.font = kit.BOLD; g.textAlign = "left";
    var u2 = nUnits - 1 - r;
    g.fillText(u2 >= 0 ? "ResUnit " + u2 + " out" : "normalised input", 6, rowY(r) + rh * 0.3);
    g.font = kit.SMALL; g.fillStyle = "#57606a";
    g.fillText(u2 >= 0 ? "d = " + units[u2].d + " · field " + rf[u2] + " steps" : "channel 0 (aggregate)", 6, rowY(r) + rh * 0.3 + 15);
    g.fillText(u2 >= 0 ? rowName[r] + " [ch " + state.ch + "]" : "", 6, rowY(r) + rh * 0.3 + 29);
  }
}
function drawRFEdges(g, geo, edges, sig, ranges) {   // edges (weights) from row r (outputs) to row r+1 (inputs)
  var maxNorm = 0;
  for (var u = 0; u < nUnits; u++) for (var k2 = 0; k2 < units[u].k; k2++) maxNorm = Math.max(maxNorm, tapNorm(u, k2, u === nUnits - 1 ? state.ch : null));
  edges.forEach(function (e) {
    var nrm = tapNorm(e.u, e.k, e.r === 0 ? state.ch : null) / (maxNorm || 1);
    var sFrom = sig[e.r], sTo = sig[e.r + 1], rgF = ranges[e.r], rgT = ranges[e.r + 1];
    var yF = geo.yOf(e.r, sFrom[e.from], rgF[0], rgF[1]);
    var inside = e.to >= 0 && e.to < L;
    var yT = inside ? geo.yOf(e.r + 1, sTo[e.to], rgT[0], rgT[1]) : geo.rowY(e.r + 1) + geo.rh * 0.74;
    g.strokeStyle = e.r === 0 ? "rgba(213,94,0,0.75)" : "rgba(0,114,178,0.45)";
    g.lineWidth = 0.5 + 3.5 * nrm;
    g.beginPath(); g.moveTo(geo.X(e.from), yF); g.lineTo(geo.X(e.to), yT); g.stroke();
  });
}
function drawRFSignal(g, geo, r, s, rg, taps) {   // one row's signal over the span and its tap points
  var X = geo.X, yOf = geo.yOf;
  g.strokeStyle = "#1b1f24"; g.lineWidth = 1.25; g.beginPath();
  var first = true;
  for (var tt = Math.max(0, geo.x0); tt <= Math.min(L - 1, geo.x1); tt++) {
    var px = X(tt), py = yOf(r, s[tt], rg[0], rg[1]);
    if (first) { g.moveTo(px, py); first = false; } else g.lineTo(px, py);
  }
  g.stroke();
  taps[r].forEach(function (p) {
    var inside = p >= 0 && p < L, px = X(p), py = inside ? yOf(r, s[p], rg[0], rg[1]) : geo.rowY(r) + geo.rh * 0.74;
    g.beginPath(); g.arc(px, py, r === 0 ? 5 : 3.2, 0, 2 * Math.PI);
    if (inside) { g.fillStyle = r === 0 ? palette[3] : palette[0]; g.fill(); }
    else { g.strokeStyle = "#8c959f"; g.lineWidth = 1; g.stroke(); }
  });
  g.fillStyle = "#57606a"; g.font = kit.SMALL; g.textAlign = "right";
  g.fillText(r === 0 ? "output step t" : taps[r].length + " steps feed t", geo.W - geo.m.r - 2, geo.rowY(r) + 10);
}
function drawRFAxis(g, geo) {
  var yb = geo.H - geo.m.b, X = geo.X;
  g.strokeStyle = "#57606a"; g.fillStyle = "#57606a"; g.font = kit.FONT; g.textAlign = "center";
  var clock = kit.clock(extra, state.sample);
  stepTicks(clock, geo.x0, geo.x1, Math.floor(geo.pw / 70)).forEach(function (tk) {
    var hw = g.measureText(tk.label).width / 2;   // a label at the window's edge stays inside the canvas
    g.beginPath(); g.moveTo(X(tk.step), yb); g.lineTo(X(tk.step), yb + 4); g.stroke(); g.fillText(tk.label, Math.max(hw + 1, Math.min(geo.W - hw - 1, X(tk.step))), yb + 13);
  });
  g.fillStyle = "#1b1f24"; g.fillText("time (UTC); output step t at " + stepTime(clock, state.t), geo.m.l + geo.pw / 2, geo.H - 8);
}
function drawRF() {
  var c = kit.ctx2d(el.rf), g = c.g, geo = rfGeometry(c.W, c.H);
  g.fillStyle = "#fff"; g.fillRect(0, 0, c.W, c.H);
  var rows = rfSignals(geo.rows), t = rfTaps(), ranges = rfRanges(rows.sig, geo);
  drawRFRows(g, geo, t.taps, rows.name);
  drawRFEdges(g, geo, t.edges, rows.sig, ranges);
  for (var r = 0; r < geo.rows; r++) drawRFSignal(g, geo, r, rows.sig[r], ranges[r], t.taps);
  drawRFAxis(g, geo);
  el.rf.setAttribute("aria-label", "Receptive field of output step " + state.t + ": " + t.taps[geo.rows - 1].length + " input steps");
}
function onRFKey(e) {
  if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
  e.preventDefault();
  ui.tSlider.setValue(Math.max(0, Math.min(L - 1, state.t + (e.key === "ArrowRight" ? 1 : -1) * (e.shiftKey ? 10 : 1))));
}

/* ---------------- view 3: feature maps (heatmap2d) ---------------- */
function buildMapDefs() {
  var defs = resNames.map(function (n, u) { return { name: n, group: "embed", label: "ResUnit " + u + " out (d = " + units[u].d + ")", unit: u }; });
  defs.push({ name: N.pos_encoding, group: "pos", label: "positional encoding (learned)", shared: true });
  defs.push({ name: N.with_pos, group: "embed", label: "embedding + positional encoding" });
  defs.push({ name: N.projection, group: "proj", label: "1×1 projection " + Cemb + " → " + cap.record(N.projection).shape[1] });
  return defs;
}
function mapData(def) {
  var r = cap.record(def.name), batched = r.axes[0] === "batch";
  var data = batched ? cap.slice(def.name, state.sample) : cap.get(def.name);
  var shp = batched ? r.shape.slice(1) : r.shape;
  return { data: data, rows: shp[0], cols: shp[1], axes: batched ? r.axes.slice(1) : r.axes };
}
function groupRanges() {
  var g = {};
  mapDefs.forEach(function (d) { var m = kit.absmax(mapData(d).data); g[d.group] = Math.max(g[d.group] || 0, m); });
  return g;
}
function mapLayout() {
  var W = el.stack.clientWidth, out = [], y = TOP;
  mapDefs.forEach(function (d) {
    var md = mapData(d), h = md.rows > 16 ? 192 : 56;
    out.push({ x: LM, y: y, width: W - LM - 16, height: h });
    y += h + GAP;
  });
  el.stack.style.height = (y - GAP + 40) + "px";
  return out;
}
function sampleMaps() {
  var rg = groupRanges();
  mapDefs.forEach(function (d, k) {
    var md = mapData(d), v = rg[d.group];
    if (!hms[k]) hms[k] = heatmap2d(el.maps, { data: md.data, rows: md.rows, cols: md.cols, vmin: -v, vmax: v, cmap: "burd" });
    else hms[k].update(md.data, -v, v);
    hms[k].def = d; hms[k].axes = md.axes;
  });
  setLegends(document.getElementById("emb-legends"), ["embed", "pos", "proj"].map(function (gname) {
    return ["burd", -rg[gname], rg[gname], GROUP_LABEL[gname], 3];
  }));
}
function drawMapLabels(g, hm, k) {   // title, record and shape, axis ends, the t cursor, the unit's receptive field
  var b = boxes[k], d = hm.def, t = state.t;
  g.fillStyle = "#1b1f24"; g.font = kit.BOLD; g.textAlign = "left";
  var tw = g.measureText(d.label).width, tx = Math.max(4, Math.min(b.x, g.canvas.clientWidth - 4 - tw));   // inside the canvas
  g.fillText(d.label, tx, b.y - 9);
  g.font = kit.SMALL; g.fillStyle = "#57606a"; g.textAlign = "right";
  // the record, its shape and note right of the title where they fit; on a phone the shortest form that fits, or none
  var rec = [d.name + " (" + hm.rows + " × " + hm.cols + ")" + (d.shared ? " · same for every sample" : ""), d.name + " (" + hm.rows + " × " + hm.cols + ")", d.name]
    .find(function (r) { return tx + tw + 12 + g.measureText(r).width <= b.x + b.width; });
  if (rec) g.fillText(rec, b.x + b.width, b.y - 9);
  g.textAlign = "right";
  g.fillText(hm.axes[0] + " 0", b.x - 6, b.y + 6);
  g.fillText(String(hm.rows - 1), b.x - 6, b.y + b.height - 6);
  g.strokeStyle = "#8c959f"; g.lineWidth = 1; g.strokeRect(b.x - 0.5, b.y - 0.5, b.width + 1, b.height + 1);
  var cx = b.x + ((t + 0.5) / hm.cols) * b.width;
  g.setLineDash([4, 3]); g.strokeStyle = "#000"; g.beginPath(); g.moveTo(cx, b.y); g.lineTo(cx, b.y + b.height); g.stroke(); g.setLineDash([]);
  if (d.unit === undefined) return;
  var half = (rf[d.unit] - 1) / 2, xa = b.x + ((t - half) / hm.cols) * b.width, xb = b.x + ((t + half + 1) / hm.cols) * b.width;
  g.strokeStyle = palette[3]; g.lineWidth = 2;
  g.beginPath(); g.moveTo(xa, b.y + b.height + 4); g.lineTo(xa, b.y + b.height + 8); g.lineTo(xb, b.y + b.height + 8); g.lineTo(xb, b.y + b.height + 4); g.stroke();
  g.fillStyle = palette[3]; g.textAlign = "left"; g.font = kit.SMALL;
  g.fillText(rf[d.unit] + " steps", xb + 4, b.y + b.height + 8);
}
function drawMapAxis(g) {
  var last = boxes[boxes.length - 1], yb = last.y + last.height;
  g.fillStyle = "#57606a"; g.font = kit.FONT; g.textAlign = "center"; g.strokeStyle = "#57606a";
  mapTicks = stepTicks(kit.clock(extra, state.sample), 0, L - 1, Math.floor(last.width / 70));
  mapTicks.forEach(function (tk) {
    var x = last.x + ((tk.step + 0.5) / L) * last.width;
    g.beginPath(); g.moveTo(x, yb); g.lineTo(x, yb + 4); g.stroke(); g.fillText(tk.label, x, yb + 13);
  });
  g.fillStyle = "#1b1f24"; g.fillText("time (UTC)", last.x + last.width / 2, yb + 30);
}
function drawMaps() {
  boxes = mapLayout();
  el.maps.style.left = "0px"; el.maps.style.top = "0px";
  el.maps.style.width = el.stack.clientWidth + "px"; el.maps.style.height = el.stack.clientHeight + "px";
  fitCanvas(el.maps);
  clear2d(el.maps);
  hms.forEach(function (hm, k) { hm.draw(boxes[k]); });
  var g = kit.ctx2d(el.overlay).g;
  hms.forEach(function (hm, k) { drawMapLabels(g, hm, k); });
  drawMapAxis(g);
}
function initMaps() {
  sampleMaps();
  drawMaps();
  hoverGrid(el.maps, hms, {
    ariaLabel: "feature maps of the embedding",
    label: function (hm, r, col, v) { return hm.def.name + "\n" + hm.axes[0] + " " + r + ", time " + stepTime(kit.clock(extra, state.sample), col) + "\nvalue " + fmt(v, 6); },
    onCell: function (hm, r, col) { lastCell = { hm: hm, r: r, col: col }; readout(); },
  });
}

/* ---------------- readout, controls, set-up ---------------- */
function readout() {
  var i = state.sample, t = state.t, rows = [["output step t", t, stepTime(kit.clock(extra, i), t), "t"]];
  var x = cap.slice(N.input, i);
  rows.push(["aggregate", x[t], fmt(aggW.f(x[t]), 5) + " " + aggW.unit, "aggregate"]);
  resNames.forEach(function (n) {
    var v = cap.slice(n, i)[state.ch * L + t];
    rows.push([n + "[" + state.ch + "]", v, undefined, n]);
  });
  if (lastCell) {
    var hm = lastCell.hm;
    rows.push(["hovered", hm.value(lastCell.r, lastCell.col), hm.def.name + "[" + lastCell.r + ", " + lastCell.col + "] = " + fmt(hm.value(lastCell.r, lastCell.col), 6), "hovered"]);
  }
  kit.setReadout(document.getElementById("emb-readout"), rows);
}
function onSample(v) { state.sample = v; ui.tOut.value = stepTime(kit.clock(extra, v), state.t); drawInput(); drawRF(); sampleMaps(); drawMaps(); readout(); }
function onT(v) { state.t = v; drawRF(); if (hms.length) drawMaps(); if (inputPlot) inputPlot.setCursor(v); readout(); }
function buildControls() {
  var controlsEl = document.getElementById("nb-controls");
  kit.sampleSelect(controlsEl, extra, onSample);
  ui.tSlider = kit.range(controlsEl, "ctl-t", "Output step t", 0, L - 1, 1, state.t, function (v) { return stepTime(kit.clock(extra, state.sample), v); }, onT);
  ui.tOut = document.getElementById("ctl-t-value");
  var chOpts = []; for (var c = 0; c < Cemb; c++) chOpts.push({ value: String(c), label: "channel " + c });
  ui.chSel = controls.select(controlsEl, "Channel", chOpts, "0", function (v) { state.ch = Number(v); drawRF(); readout(); });
  ui.chSel.id = "ctl-channel";
}
function buildViews() {
  el.input = document.getElementById("emb-input"); el.rf = document.getElementById("emb-rf");
  el.maps = document.getElementById("emb-maps"); el.overlay = document.getElementById("emb-maps-labels");
  el.stack = document.getElementById("emb-stack");
  kit.saveView(document.getElementById("view-input"), el.input, "embedding-input.png");
  kit.saveView(document.getElementById("view-rf"), el.rf, "embedding-receptive-field.png");
  kit.saveView(document.getElementById("view-maps"), function () { return kit.layered(el.maps, el.overlay); }, "embedding-feature-maps.png");
  el.rf.addEventListener("keydown", onRFKey);
}
function finish() {
  testHook({ state: state, cap: cap, extra: extra, heatmaps: hms, boxes: function () { return boxes; }, mapTicks: function () { return mapTicks; }, setT: function (v) { ui.tSlider.setValue(v); } });
  stateInUrl([["sample", "#ctl-sample"], ["t", ui.tSlider], ["channel", ui.chSel]]);
  ready();
}

function run(pg) {
  var L0 = kit.load();
  N = pg.data.names; cap = L0.cap; extra = L0.extra;
  var inRec = cap.record(N.input);
  C = inRec.shape[1]; L = inRec.shape[2];
  units = extra.units.map(function (u) { return { w: f32(u.weight), shape: u.shape, d: u.dilation, k: u.kernel }; });
  nUnits = units.length;
  resNames = N.res_out;   // each ResUnit's output, in order
  Cemb = cap.record(resNames[0]).shape[1];
  rf = []; var acc = 1;   // receptive field after each unit: 1 + sum (k - 1) d
  units.forEach(function (u) { acc += (u.k - 1) * u.d; rf.push(acc); });
  state = { sample: 0, t: Math.floor(L / 2), ch: 0 };
  aggW = kit.watts(extra, "aggregate");
  buildControls();
  buildViews();
  mapDefs = buildMapDefs();
  kit.onResize(el.stack, function () { if (hms.length) drawMaps(); drawRF(); if (inputPlot) inputPlot.draw(); });
  inTasks([newTask, drawRF, drawInput, initMaps, readout, finish]);   // drawRF too in a task of its own (the first layout)
}

registerPage({ slug: "embedding", start: run });

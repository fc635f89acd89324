/* page_upstream_attention.js: the Attention page of an upstream model (nilmbuild/site/views/upstream_attention.py).
 * Every head of the selected layer over the model's T = L + 1 tokens (the L time steps, then the stats token), from
 * the capture's derived weights (decode.js rebuilds them from q, k and lse). The large map is the selected head; the
 * small ones every head of the layer; the last row and column are the stats token, framed and labelled. Below: the
 * selected query's weights over the time-step keys beside the aggregate in watts (the stats token's weight in the
 * readout), and the weight each time step puts on the stats token, per head. Sizes come from the records' shapes
 * and page().data.tokens; record names from page().data.names. Time steps read in clock time (UTC, time_axis.js) from
 * the selected window's start; the stats token keeps its own label, token L + 1. */
import { registerPage } from "./register.js";
import { stateInUrl } from "./url_state.js";
import { legend } from "./colormaps.js";
import { blob, context2d, controls, fmt, font, ready, setText } from "./core.js";
import { decode } from "./decode.js";
import { onWidth } from "./on_width.js";
import { watts } from "./disaggregation_watts.js";
import { fitCanvas, hoverGrid } from "./grid.js";
import { clear2d, heatmap2d } from "./heatmap2d.js";
import { plot2d } from "./plot2d.js";
import { stepTicks, stepTime, timeAxis, windowClock } from "./time_axis.js";
import { upstreamWhatIf } from "./whatif_upstream.js";
import { headMatrix as makeHeadMatrix } from "./head_matrix.js";

var LOG_MIN = -4, LOG_MAX = 0;   // log10 colour domain: 1e-4 .. 1
var STATS_COLOUR = "#D55E00";    // the stats token's frame and labels

var P, N, cap, S, T, H, TOK, canvas, LAY, maps = [], ui = {}, cache = {};

/* ---------- data ---------- */
// the (H, T, T) weights of layer l for the selected sample, rebuilt once per (layer, sample)
function weights(l) {
  var key = l + "|" + S.sample;
  if (!cache[key]) cache[key] = cap.slice(N.weights[l], S.sample);
  return cache[key];
}
function headWeights(l, h) { return weights(l).subarray(h * T * T, (h + 1) * T * T); }
function logOf(w) {
  var out = new Float32Array(w.length);
  for (var i = 0; i < w.length; i++) out[i] = Math.log10(Math.max(w[i], 1e-30));
  return out;
}
function stepS() { return TOK.step_minutes * 60; }
function clock() { return windowClock(P.sample_labels[S.sample], stepS()); }   // the selected window's steps in UTC
function tokenName(i) {
  return i === TOK.stats_index ? TOK.stats_label : stepTime(clock(), i) + " (step " + i + ")";
}
function aggregateW() {
  var x = cap.slice(N.input, S.sample);
  return watts.inverse("aggregate", x.subarray(0, TOK.steps));
}

/* ---------- the maps ---------- */
function layout() {   // large head left, the layer's heads as small multiples right (below it on a narrow screen)
  var W = canvas.clientWidth, padL = 64, padT = 30, padB = 52, gap = 26;
  var narrow = W < 640, cols = Math.max(1, Math.ceil(Math.sqrt(H)));
  var big = Math.floor(Math.max(80, Math.min(narrow ? W - padL - 12 : 460, (W - padL - gap) * (narrow ? 1 : 0.62))));
  var x0 = narrow ? padL : padL + big + gap, y0 = narrow ? padT + big + padB + 10 : padT;
  var room = narrow ? W - padL - 12 : W - x0 - 8;
  var cell = Math.floor(Math.max(28, Math.min(140, (room - 10 * (cols - 1)) / cols)));
  var out = { big: { x: padL, y: padT, width: big, height: big }, small: [] };
  for (var h = 0; h < H; h++) {
    out.small.push({ x: x0 + (h % cols) * (cell + 10), y: y0 + Math.floor(h / cols) * (cell + 20), width: cell, height: cell });
  }
  var rows = Math.ceil(H / cols);
  out.height = Math.max(padT + big + padB, y0 + rows * (cell + 20)) + 8;
  return out;
}
function buildMaps() {
  maps = [];
  for (var h = 0; h <= H; h++) {
    maps.push(heatmap2d(canvas, { data: new Float32Array(T * T), rows: T, cols: T, vmin: LOG_MIN, vmax: LOG_MAX, cmap: "viridis" }));
  }
}
function drawMaps() {
  LAY = layout();
  canvas.style.height = LAY.height + "px";
  fitCanvas(canvas);
  clear2d(canvas);
  maps[0].update(logOf(headWeights(S.layer, S.head)));
  maps[0].draw(LAY.big);
  for (var h = 0; h < H; h++) { maps[h + 1].update(logOf(headWeights(S.layer, h))); maps[h + 1].draw(LAY.small[h]); }
  drawAxes();
}

/* ---------- axes and the stats token's frame ---------- */
function scaled(g) {
  g.setTransform(canvas.width / canvas.clientWidth, 0, 0, canvas.height / canvas.clientHeight, 0, 0);
  g.font = font(12); g.fillStyle = "#1b1f24"; g.strokeStyle = "#57606a"; g.lineWidth = 1;
}
function statsFrame(g, b) {   // the last row and the last column of a map, outlined
  var cw = b.width / T, ch = b.height / T;
  g.save(); g.strokeStyle = STATS_COLOUR; g.lineWidth = 1.5;
  g.strokeRect(b.x, b.y + (T - 1) * ch, b.width, ch);
  g.strokeRect(b.x + (T - 1) * cw, b.y, cw, b.height);
  g.restore();
}
function mapTicks(n) {   // at least two clock ticks clear of the stats token's label (asking for more where needed)
  var keep = function (t) { return t.step <= TOK.steps - 1 - TOK.steps / 12; }, ticks = [];
  for (var k = n; ticks.length < 2 && k < n + 8; k++) ticks = stepTicks(clock(), 0, TOK.steps - 1, k).filter(keep);
  return ticks;
}
function drawTicks(g, b) {   // clock-time ticks (UTC) below and left of the large map; "stats" at the last token
  var ticks = mapTicks(Math.max(2, Math.min(5, Math.floor(b.width / 70))));
  LAY.ticks = ticks.map(function (t) { return { step: t.step, label: t.label, x: b.x + ((t.step + 0.5) / T) * b.width }; });
  g.textAlign = "center"; g.textBaseline = "top";
  LAY.ticks.forEach(function (t) { g.fillText(t.label, t.x, b.y + b.height + 4); });
  g.textAlign = "right"; g.textBaseline = "middle";
  ticks.forEach(function (t) { g.fillText(t.label, b.x - 4, b.y + ((t.step + 0.5) / T) * b.height); });
  g.save(); g.fillStyle = STATS_COLOUR; g.font = font(12, 600);
  g.fillText("stats", b.x - 4, b.y + b.height - b.height / (2 * T));
  g.textAlign = "center"; g.textBaseline = "top";
  g.fillText("stats", b.x + b.width - b.width / (2 * T), b.y + b.height + 4);
  g.restore();
}
function drawAxes() {
  var g = context2d(canvas), b = LAY.big;
  scaled(g);
  drawTicks(g, b);
  g.textAlign = "center"; g.textBaseline = "top";
  g.fillText("key token (time, UTC; last: stats)", b.x + b.width / 2, b.y + b.height + 34);
  g.save(); g.translate(14, b.y + b.height / 2); g.rotate(-Math.PI / 2); g.textBaseline = "middle";
  g.fillText("query token (time, UTC; last: stats)", 0, 0); g.restore();
  g.font = font(13, 600); g.textAlign = "left"; g.textBaseline = "bottom";
  g.fillText("Layer " + S.layer + ", head " + S.head + " · " + T + " tokens", b.x, b.y - 6);
  statsFrame(g, b);
  LAY.small.forEach(function (sb, h) {
    statsFrame(g, sb);
    g.font = font(12, h === S.head ? 700 : 400); g.fillStyle = h === S.head ? STATS_COLOUR : "#1b1f24";
    g.fillText("head " + h, sb.x, sb.y - 3);
  });
  g.fillStyle = "#1b1f24";
}

/* ---------- the selected query ---------- */
function drawRow() {
  var w = headWeights(S.layer, S.head), q = S.query, steps = TOK.steps;
  var row = w.subarray(q * T, q * T + steps), xs = stepsX();
  var p = plot2d.create(document.getElementById("uat-row"), {
    title: "Query " + tokenName(q) + ", layer " + S.layer + ", head " + S.head,
    x: timeAxis(P.sample_labels[S.sample], stepS(), steps, "key time"),
    lanes: [{ title: "attention weight", y: { label: "weight", unit: "0-1", zero: true }, series: [{ name: "weight", x: xs, y: Float32Array.from(row), kind: "line" }] },
            { title: "aggregate", y: { label: "power", unit: "W" }, series: [{ name: "aggregate", x: xs, y: aggregateW(), kind: "area" }] }] });
  p.draw();
  setText(document.getElementById("uat-row-stats"), "Weight of " + tokenName(q) + " on the " + TOK.stats_label + ": " +
    fmt(w[q * T + TOK.stats_index], 5) + "; on the " + steps + " time steps together: " + fmt(sum(row), 5) + ".");
  return p;
}
function stepsX() { return Float32Array.from({ length: TOK.steps }, function (_, i) { return i; }); }   // step indices
function sum(a) { var s = 0; for (var i = 0; i < a.length; i++) s += a[i]; return s; }
function drawStatsReads() {   // weight[h, t, stats] for every time-step query t, one series per head
  var xs = stepsX(), series = [];
  for (var h = 0; h < H; h++) {
    var w = headWeights(S.layer, h), y = new Float32Array(TOK.steps);
    for (var t = 0; t < TOK.steps; t++) y[t] = w[t * T + TOK.stats_index];
    series.push({ name: "head " + h, x: xs, y: y, kind: "line", width: h === S.head ? 2.5 : 1.2 });
  }
  var p = plot2d.create(document.getElementById("uat-stats"), {
    title: "Layer " + S.layer + ": weight on the " + TOK.stats_label + " per time-step query",
    x: timeAxis(P.sample_labels[S.sample], stepS(), TOK.steps, "query time"),
    lanes: [{ title: "weight on the stats token", y: { label: "weight", unit: "0-1", zero: true }, series: series }] });
  p.draw();
  return p;
}
function readout(r, c) {
  var v = headWeights(S.layer, S.head)[r * T + c];
  setText(document.getElementById("uat-readout"), "Layer " + S.layer + ", head " + S.head + ": query " + tokenName(r) +
    " → key " + tokenName(c) + ": weight " + fmt(v, 6));
}

/* ---------- which heads serve which device (the capture's head ablation) ---------- */
function onHeadPicked(l, h, sample, c) {   // open the head's map on the page window where the change is largest
  var i = P.samples.indexOf(sample);
  if (i >= 0) { S.sample = i; ui.sample.value = String(i); }
  S.layer = l; S.head = h; ui.layer.value = String(l); ui.head.value = String(h);
  drawAll();
  setText(document.getElementById("uat-heads-readout"), "Opened layer " + l + ", head " + h + " on batch sample " + sample +
    ": zeroing it changes the " + String(cap.meta.devices[c.device]).replace(/_/g, " ") + " by " + fmt(c.value, 4) +
    " W on average over the ablated windows.");
  canvas.scrollIntoView({ block: "nearest" });
}
function buildHeadMatrix() {   // null when the capture has no head ablation (a checkpoint without power scalers)
  if (!P.head_ablation || !cap.has(N.head_delta)) return null;
  var m = makeHeadMatrix.create(document.getElementById("uat-heads"), document.getElementById("uat-heads-axes"), cap,
    { names: { delta: N.head_delta, sample: N.head_sample }, onPick: onHeadPicked });
  legend(document.getElementById("uat-heads-legend"), "viridis", 0, m.vmax, "mean |change in the device's watts| when the head is zeroed (W)");
  return m;
}

/* ---------- building ---------- */
function drawAll() { drawMaps(); S.rowPlot = drawRow(); S.statsPlot = drawStatsReads(); }
function adapters() {   // hover / keyboard over the large map (raw weights), click on a small map picks its head
  var big = Object.create(maps[0]);
  big.value = function (r, c) { return headWeights(S.layer, S.head)[r * T + c]; };
  hoverGrid(canvas, [big], {
    label: function (hm, r, c, v) { return "query " + tokenName(r) + "\nkey " + tokenName(c) + "\nweight " + fmt(v, 6); },
    onCell: function (hm, r, c) { if (r !== S.query) { S.query = r; S.rowPlot = drawRow(); } readout(r, c); },
    ariaLabel: "attention weights of the selected head: query tokens by key tokens",
  });
  canvas.addEventListener("click", function (e) {
    var rect = canvas.getBoundingClientRect(), px = e.clientX - rect.left, py = e.clientY - rect.top;
    for (var h = 0; h < H; h++) if (maps[h + 1].cellAt(px, py)) { ui.head.value = String(h); setHead(h); }
  });
}
function named(el, id) { el.id = id; el.previousSibling.htmlFor = id; }   // the control and its label
function setHead(h) { S.head = h; drawAll(); }
function buildControls() {
  var box = document.getElementById("nb-controls");
  var opt = function (n, label) { return Array.from({ length: n }, function (_, i) { return { value: i, label: label(i) }; }); };
  ui.sample = controls.select(box, "Window", opt(P.samples.length, function (i) { return "sample " + P.samples[i] + " · " + P.sample_labels[i]; }), 0,
    function (v) { S.sample = Number(v); drawAll(); if (ui.whatIf) ui.whatIf.update(); });
  ui.layer = controls.select(box, "Layer", opt(P.n_layers, String), 0, function (v) { S.layer = Number(v); drawAll(); });
  ui.head = controls.select(box, "Head", opt(H, String), 0, function (v) { setHead(Number(v)); });
  named(ui.sample, "uat-sample"); named(ui.layer, "uat-layer"); named(ui.head, "uat-head");
  legend(document.getElementById("nb-legend"), "viridis", LOG_MIN, LOG_MAX, "log10 attention weight");
}

function start(page) {
  P = page.data; N = P.names; TOK = P.tokens;
  cap = decode(blob("capture"));
  var q = cap.record(N.q[0]).shape;   // (samples, heads, tokens, head dim)
  H = q[1]; T = q[2];
  if (T !== TOK.stats_index + 1) throw new Error("attention: " + T + " tokens in the capture, expected " + (TOK.stats_index + 1));
  S = { sample: 0, layer: 0, head: 0, query: 0 };
  canvas = document.getElementById("uat-main");
  buildMaps();
  buildControls();
  drawAll();
  adapters();
  var wbox = document.getElementById("uat-whatif");   // absent when the model does not mask the diagonal
  if (wbox) ui.whatIf = upstreamWhatIf({ box: wbox, data: P.whatif, key: "maskDiagonal", label: "diagonal mask off",
                                         sample: function () { return S.sample; } });
  ui.heads = buildHeadMatrix();
  stateInUrl([["sample", ui.sample], ["layer", ui.layer], ["head", ui.head]]);
  onWidth(canvas, drawMaps);
  ready();
  return { state: S, headWeights: headWeights, layout: function () { return LAY; }, tokens: TOK, whatIf: ui.whatIf,
           headMatrix: ui.heads };
}

registerPage({ slug: "attention", start: start });

/* page_encoder.js: the encoder page (spec encoder-film.md 6).
 * #enc-main: one 2D canvas, one heatmap2d per sub-step of the selected layer (feature rows x time columns,
 * transposed from the records' (batch, time, feature) layout), diverging colormap, symmetric range. 2D, not
 * WebGL: the strips are drawn once per layer/sample/range change, a few ms of JS each, while a WebGL context
 * costs 100-300 ms of the load in software GL.
 * 2D canvases: the FFN (d_model -> d_ff -> d_model) at the selected step, FiLM gamma/beta per layer, the step's vector per layer.
 * Record names come from the view (page().data.names, nilmbuild/site/views/encoder.py); shapes and axes from the
 * blob's records. The page state lives in module variables set once by start(); each function does one job.
 */
import { registerPage, testHook } from "./register.js";
import { chooseOption, stateInUrl } from "./url_state.js";
import { colormaps, palette, setLegends } from "./colormaps.js";
import { blob, context2d, controls, element, fmt, font, inTasks, onResize, onScreen, overlay2d, placeAt, ready, saveButton, setText } from "./core.js";
import { decode } from "./decode.js";
import { fitCanvas, hoverGrid } from "./grid.js";
import { clear2d, heatmap2d } from "./heatmap2d.js";
import { plot2d } from "./plot2d.js";
import { stepTicks, windowClock } from "./time_axis.js";

var FONT = font(12);
var BOLD = font(13, 600);
var CMAP = "burd";

/* ---------- the page's state (one page per document; set by start) ---------- */
var P, PG, N, cap, steps, T, D, S, canvas, overlay, cursor, posIn;
var hms = [], ranges = [], LAY = [], tabButtons = [];
var tCache = {};
// The d_ff-wide FFN strips cost the most to rebuild (Linear(d_model, d_ff) over every step of every carried
// sample, in decode.js): the first frame draws the other strips and those follow one task later.
var heavyDone = {}, pending = [], heavyTimer = null;

/* ---------- data helpers ---------- */
function name(layer, suffix) { return N.layers[layer][suffix]; }
function transposed(nm) {           // (time, F) slice of the selected sample -> (F, time)
  var key = nm + "#" + S.sample;
  if (tCache[key]) return tCache[key];
  var r = cap.record(nm), Tn = r.shape[1], F = r.shape[2], a = cap.slice(nm, S.sample), out = new Float32Array(Tn * F);
  for (var t = 0; t < Tn; t++) for (var f = 0; f < F; f++) out[f * Tn + t] = a[t * F + f];
  return (tCache[key] = out);
}
function vecAt(nm, t) {             // the F-vector of one time step
  var r = cap.record(nm), F = r.shape[2], a = cap.slice(nm, S.sample);
  return a.subarray(t * F, (t + 1) * F);
}
function absMax(a) { var m = 0; for (var i = 0; i < a.length; i++) { var v = Math.abs(a[i]); if (v > m) m = v; } return m || 1; }
var stripMaxes = new WeakMap();
function stripMax(d) {            // absMax of a cached strip, once (a sample switch redraws every strip)
  if (!stripMaxes.has(d)) stripMaxes.set(d, absMax(d));
  return stripMaxes.get(d);
}

/* ---------- main canvas ---------- */
function heavy(s) { return cap.record(name(0, s.suffix)).shape[2] > D; }
function buildHeatmaps() {       // created once; later layers/samples update the same heatmaps (same shapes)
  ranges = [];
  var waiting = false;
  steps.forEach(function (s, i) {
    var nm = name(S.layer, s.suffix), r = cap.record(nm);
    if (heavy(s) && !heavyDone[S.layer]) {
      pending[i] = true; waiting = true; ranges.push(0);
      if (!hms[i]) hms.push(heatmap2d(canvas, { data: new Float32Array(r.shape[1] * r.shape[2]), rows: r.shape[2], cols: r.shape[1], vmin: -1, vmax: 1, cmap: CMAP }));
      return;
    }
    pending[i] = false;
    var d = transposed(nm), m = stripMax(d);
    ranges.push(m);
    if (hms[i]) hms[i].update(d, -m, m);
    else hms.push(heatmap2d(canvas, { data: d, rows: r.shape[2], cols: r.shape[1], vmin: -m, vmax: m, cmap: CMAP }));
  });
  if (S.scale === "shared") {
    var g = Math.max.apply(null, ranges);
    hms.forEach(function (h) { h.setRange(-g, g); });
  }
  if (waiting && !heavyTimer) heavyTimer = setTimeout(onHeavyTimer, 16);
}
function onHeavyTimer() {   // the FFN strips of the layer, one task after the others
  heavyTimer = null;
  var layer = S.layer;
  steps.forEach(function (s) { if (heavy(s)) transposed(name(layer, s.suffix)); });
  heavyDone[layer] = true;
  buildHeatmaps(); frame(); drawLegend(); drawFFN();
}
function layout() {
  var W = canvas.clientWidth, Hh = canvas.clientHeight, left = 112, right = 70, top = 6, bottom = 34, gap = 14;
  var units = steps.map(function (s) { var F = cap.record(name(0, s.suffix)).shape[2]; return F > D ? 2.4 : 1; });
  var usum = units.reduce(function (a, b) { return a + b; }, 0), avail = Hh - top - bottom - gap * (steps.length - 1);
  var y = top;
  return units.map(function (u) { var h = Math.floor((avail * u) / usum), b = { x: left, y: y, width: Math.floor(W - left - right), height: h }; y += h + gap; return b; });
}
function frame() {
  fitCanvas(canvas);
  LAY = layout();
  clear2d(canvas);
  hms.forEach(function (h, i) { if (!pending[i]) h.draw(LAY[i]); });
  drawOverlay();
}
var overlayKey = null;
function drawOverlay() {   // labels, frames and time axis, redrawn only when they change (a redrawn 2D canvas is
  // re-uploaded whole: ~20 % of a frame on a sample switch); each strip's range and the selected step are marks
  var W = canvas.clientWidth, Hh = canvas.clientHeight;
  placeMarks();
  var key = [W, Hh, window.devicePixelRatio, S.layer, S.sample, pending.join(",")].join("|");
  if (key === overlayKey) return;
  overlayKey = key;
  var g = overlay2d(overlay, W, Hh);
  plot2d.recordText(g, overlay);   // every label's box, for the overlap tests
  steps.forEach(function (s, i) { drawStripLabels(g, s, i); });
  // time in clock time (UTC): the sample's window start (its label), one model step per token
  var last = LAY[LAY.length - 1], ticks = stepTicks(windowClock(P.sample_labels[S.sample], PG.model.step_minutes * 60), 0, T - 1,
                                                 Math.min(8, Math.floor(last.width / 60)));
  g.fillStyle = "#1b1f24"; g.textAlign = "center"; g.textBaseline = "top"; g.font = FONT;
  ticks.forEach(function (t) { var x = last.x + ((t.step + 0.5) / T) * last.width; g.fillText(t.label, x, last.y + last.height + 3); });
  g.fillText("time (UTC)", last.x + last.width / 2, last.y + last.height + 17);
}
function drawStripLabels(g, s, i) {   // name, shape and stage left of strip i; its frame; the arrow to the next
  var b = LAY[i], r = cap.record(name(S.layer, s.suffix));
  g.fillStyle = "#1b1f24"; g.font = BOLD; g.textAlign = "right"; g.textBaseline = "middle";
  g.fillText(s.label, b.x - 8, b.y + b.height / 2 - 7);
  g.font = FONT; g.fillStyle = "#57606a";
  g.fillText(r.shape[1] + " × " + r.shape[2] + " · " + r.stage, b.x - 8, b.y + b.height / 2 + 8);
  if (pending[i]) { g.textAlign = "center"; g.fillText("computing Linear(" + D + ", " + r.shape[2] + ") for every step…", b.x + b.width / 2, b.y + b.height / 2); }
  g.strokeStyle = "#d0d7de"; g.strokeRect(b.x - 0.5, b.y - 0.5, b.width + 1, b.height + 1);
  if (i < steps.length - 1) {   // flow arrow between strips
    g.fillStyle = "#8c959f"; var ax = b.x - 100, ay = b.y + b.height + 2;
    g.beginPath(); g.moveTo(ax, ay); g.lineTo(ax + 8, ay); g.lineTo(ax + 4, ay + 8); g.fill();
  }
}

// Each strip's colour range (right of it) and the selected step's dashed line, as elements over the overlay:
// a sample switch or a position drag changes only their text or place.
var marks = null;
function buildMarks() {
  var wrap = overlay.parentNode;
  marks = { ranges: steps.map(function () { return wrap.appendChild(element("div", { class: "enc-mark enc-range" })); }),
            step: wrap.appendChild(element("div", { class: "enc-mark enc-step" })) };
}
function placeMarks() {
  if (!marks || !LAY.length) return;   // before the first frame (a deep link's position): placed by frame()
  var last = LAY[LAY.length - 1], x = LAY[0].x + ((S.pos + 0.5) / T) * LAY[0].width;
  marks.ranges.forEach(function (m, i) {
    var b = LAY[i];
    setText(m, pending[i] ? "…" : "±" + fmt(hms[i].vmax, 3));
    placeAt(m, b.x + b.width + 6, b.y + b.height / 2);
  });
  placeAt(marks.step, x - 0.5, LAY[0].y - 4, 0, last.y + last.height + 6 - LAY[0].y);
}

/* ---------- 2D panels ---------- */
function ctx2d(c) {
  fitCanvas(c);
  var dpr = window.devicePixelRatio || 1, g = context2d(c);
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.fillStyle = "#fff"; g.fillRect(0, 0, c.clientWidth, c.clientHeight);
  g.font = FONT; g.textBaseline = "alphabetic"; g.textAlign = "left";
  plot2d.recordText(g, c);   // every label's box, for the overlap tests
  return g;
}
// bars of v in the box, centred on a zero line, scaled to ±m; colour by value through the diverging map
function bars(g, v, box, m, colourByValue, colour) {
  var mid = box.y + box.height / 2, bw = box.width / v.length;
  g.strokeStyle = "#d0d7de"; g.beginPath(); g.moveTo(box.x, mid); g.lineTo(box.x + box.width, mid); g.stroke();
  for (var i = 0; i < v.length; i++) {
    var h = (v[i] / m) * (box.height / 2 - 1);
    g.fillStyle = colourByValue ? colormaps.css(CMAP, 0.5 + 0.5 * Math.max(-1, Math.min(1, v[i] / m))) : colour;
    g.fillRect(box.x + i * bw, h >= 0 ? mid - h : mid, Math.max(1, bw - (bw > 3 ? 1 : 0)), Math.max(Math.abs(h), 0.5));
  }
}
// A panel's bold title at (left, y) where it fits on one line, else wrapped from the canvas' left edge (a phone);
// -> {extra: the px the lines below it move down}.
function headLines(g, text, left, W, y) {
  var fits = g.measureText(text).width <= W - left - 4, lines = fits ? [text] : plot2d.wrap(g, text, W - 8);
  lines.forEach(function (line, k) { g.fillText(line, fits ? left : 4, y + 15 * k); });
  return { extra: 15 * (lines.length - 1) };
}
function drawFFN() {
  var c = document.getElementById("enc-ffn");
  var g = ctx2d(c), W = c.clientWidth, Hh = c.clientHeight, left = 100, right = 60;
  if (!heavyDone[S.layer]) { g.fillStyle = "#57606a"; g.fillText("computing the FFN hidden layer…", left, 20); return; }
  var rows = [["LN2", "ln2"], ["GELU", "ffn.gelu"], ["FFN out", "ffn.out"]].filter(function (r) { return cap.has(name(S.layer, r[1])); });
  g.font = BOLD; g.fillStyle = "#1b1f24";
  var head = headLines(g, "layer " + S.layer + ", t = " + S.pos + " min: each time step passes through the FFN on its own", left, W, 15);
  var full = W - left - right, laneH = (Hh - 30 - head.extra - 24 * (rows.length - 1)) / rows.length, y = 24 + head.extra;
  var prev = null, widest = Math.max.apply(null, rows.map(function (r) { return vecAt(name(S.layer, r[1]), S.pos).length; }));
  rows.forEach(function (r) {
    var nm = name(S.layer, r[1]), v = vecAt(nm, S.pos), F = v.length, w = full * F / widest, x = left + (full - w) / 2, box = { x: x, y: y, width: w, height: laneH };
    if (prev) {   // the fan from the previous vector's width to this one's (expansion / compression)
      g.fillStyle = "rgba(140,149,159,0.16)";
      g.beginPath(); g.moveTo(prev.x, prev.y + prev.height); g.lineTo(prev.x + prev.width, prev.y + prev.height);
      g.lineTo(box.x + box.width, box.y); g.lineTo(box.x, box.y); g.closePath(); g.fill();
    }
    g.fillStyle = "#f6f8fa"; g.fillRect(box.x, box.y, box.width, box.height);
    var m = absMax(v);
    bars(g, v, box, m, true);
    g.fillStyle = "#1b1f24"; g.font = BOLD; g.textAlign = "right"; g.textBaseline = "middle";
    g.fillText(r[0], x - 8, y + laneH / 2 - 7);
    g.font = FONT; g.fillStyle = "#57606a"; g.fillText(F + " values", x - 8, y + laneH / 2 + 8);
    g.textAlign = "left"; g.fillText("±" + fmt(m, 3), x + w + 6, y + laneH / 2);
    g.textBaseline = "alphabetic";
    prev = box; y += laneH + 24;
  });
}
function drawFiLM() {
  var c = document.getElementById("enc-film");
  var g = ctx2d(c), W = c.clientWidth, Hh = c.clientHeight, left = 70, gap = 26;
  var gm = cap.record(N.gamma_mean), nL = gm.shape[1], F = gm.shape[2];
  var gam = cap.slice(N.gamma_mean, S.sample), bet = cap.slice(N.beta_mean, S.sample);
  var m = Math.max(absMax(gam), absMax(bet), 1e-6), colW = (W - left - gap - 50) / 2, laneH = (Hh - 40) / nL;
  g.font = BOLD; g.fillStyle = "#1b1f24";
  var gTitle = "γ (scale: FFN × (1 + γ))", room = colW + gap - 8, scale = "bars scaled to ±" + fmt(m, 3);
  g.fillText(g.measureText(gTitle).width <= room ? gTitle : "γ (scale)", left, 14); g.fillText("β (shift)", left + colW + gap, 14);
  var bEnd = left + colW + gap + g.measureText("β (shift)").width + 8;
  g.font = FONT; g.fillStyle = "#57606a"; g.textAlign = "right";
  g.fillText(W - 4 - g.measureText(scale).width >= bEnd ? scale : "±" + fmt(m, 3), W - 4, 14);   // a phone: the scale alone
  for (var l = 0; l < nL; l++) {
    var y = 24 + l * laneH;
    if (l === S.layer) { g.fillStyle = "rgba(11,92,173,0.08)"; g.fillRect(0, y - 2, W, laneH); }
    g.fillStyle = "#1b1f24"; g.textAlign = "right"; g.textBaseline = "middle"; g.font = l === S.layer ? BOLD : FONT;
    g.fillText("layer " + l, left - 8, y + laneH / 2 - 2);
    g.textBaseline = "alphabetic"; g.font = FONT;
    bars(g, gam.subarray(l * F, (l + 1) * F), { x: left, y: y + 2, width: colW, height: laneH - 8 }, m, false, palette[l]);
    bars(g, bet.subarray(l * F, (l + 1) * F), { x: left + colW + gap, y: y + 2, width: colW, height: laneH - 8 }, m, false, palette[l]);
  }
  g.textAlign = "center"; g.fillStyle = "#57606a";
  g.fillText("feature 0 … " + (F - 1), left + colW / 2, Hh - 4); g.fillText("feature 0 … " + (F - 1), left + colW + gap + colW / 2, Hh - 4);
  if (absMax(gam) === 1 && absMax(bet) === 1 && gam.every(function (v) { return v === 0; }) && bet.every(function (v) { return v === 0; })) {
    g.fillStyle = "rgba(255,255,255,0.9)"; g.fillRect(W / 2 - 270, Hh / 2 - 12, 540, 20);
    g.fillStyle = "#1b1f24"; g.textBaseline = "middle"; g.fillText("γ = β = 0 everywhere: FiLM is the identity for this checkpoint (fc2 starts at zero)", W / 2, Hh / 2);
  }
}
function drawTopChanges(g, v, prev, box) {   // ▲ over the 5 features whose value changed most from prev to v
  var d = [], bw = box.width / D;
  for (var f = 0; f < D; f++) d.push([Math.abs(v[f] - prev[f]), f]);
  d.sort(function (a, b) { return b[0] - a[0]; });
  g.fillStyle = "#1b1f24";
  d.slice(0, 5).forEach(function (p) {
    var x = box.x + (p[1] + 0.5) * bw;
    g.beginPath(); g.moveTo(x, box.y + 1); g.lineTo(x - 4, box.y - 6); g.lineTo(x + 4, box.y - 6); g.closePath(); g.fill();
  });
}
function drawEvo() {
  var c = document.getElementById("enc-evo");
  var g = ctx2d(c), W = c.clientWidth, Hh = c.clientHeight, left = 120, right = 60;
  var rows = [["enters layer 0", name(0, "in")]];
  for (var l = 0; l < P.n_layers; l++) rows.push(["after layer " + l, name(l, "out")]);
  var vs = rows.map(function (r) { return vecAt(r[1], S.pos); }), m = Math.max.apply(null, vs.map(absMax));
  g.font = BOLD; g.fillStyle = "#1b1f24";
  var head = headLines(g, "t = " + S.pos + " min, " + D + " features, common scale ±" + fmt(m, 3) + " (▲ = the 5 largest changes)", left, W, 14);
  var laneH = (Hh - 40 - head.extra) / rows.length;
  rows.forEach(function (r, i) {
    var y = 22 + head.extra + i * laneH, box = { x: left, y: y, width: W - left - right, height: laneH - 10 };
    g.fillStyle = "#f6f8fa"; g.fillRect(box.x, box.y, box.width, box.height);
    bars(g, vs[i], box, m, true);
    g.fillStyle = "#1b1f24"; g.font = FONT; g.textAlign = "right"; g.textBaseline = "middle";
    g.fillText(r[0], left - 8, y + laneH / 2 - 5);
    g.textAlign = "left"; g.textBaseline = "alphabetic";
    if (i > 0) drawTopChanges(g, vs[i], vs[i - 1], box);   // mark the features that changed most in this layer
  });
  g.textAlign = "center"; g.fillStyle = "#57606a";
  g.fillText("feature 0 … " + (D - 1), left + (W - left - right) / 2, Hh - 4);
}
var later = {};   // the panels below the strips, drawn when on screen (core.onScreen; set by buildLater)
function buildLater() {
  var none = function () {};   // a model without FiLM (N.gamma_mean null) has no FiLM panel
  ["ffn", "film", "evo"].forEach(function (k) { var el = document.getElementById("enc-" + k); later[k] = el ? onScreen(el) : none; });
}
function panels() { later.ffn(drawFFN); later.film(drawFiLM); later.evo(drawEvo); }

/* ---------- controls ---------- */
function buildTab(tabs, layer) {
  var b = document.createElement("button");
  b.type = "button"; b.className = "nb-btn"; b.setAttribute("role", "tab"); b.id = "enc-tab-" + layer;
  b.textContent = "Layer " + layer;
  b.addEventListener("click", function () { setLayer(layer); });
  b.addEventListener("keydown", function (e) {
    var k = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
    if (k) { e.preventDefault(); var n = (layer + k + P.n_layers) % P.n_layers; setLayer(n); tabButtons[n].focus(); }
  });
  tabs.appendChild(b); tabButtons.push(b);
}
function buildTabs() {
  var tabs = document.getElementById("enc-tabs");
  for (var l = 0; l < P.n_layers; l++) buildTab(tabs, l);
}
function syncTabs() {
  tabButtons.forEach(function (b, i) { b.setAttribute("aria-selected", String(i === S.layer)); b.tabIndex = i === S.layer ? 0 : -1; });
}
function setLayer(l) { S.layer = l; syncTabs(); buildHeatmaps(); frame(); panels(); drawLegend(); }
function buildControls() {
  var ctl = document.getElementById("nb-controls");
  controls.select(ctl, "Sample", P.samples.map(function (s, i) { return { value: i, label: "batch sample " + s + " · " + P.sample_labels[i] }; }),
    0, function (v) { S.sample = Number(v); buildHeatmaps(); frame(); panels(); drawLegend(); }).id = "enc-sample";
  posIn = controls.range(ctl, "Time step t (min)", 0, T - 1, 1, S.pos, function (v) { setPos(v); });
  posIn.id = "enc-pos";
  controls.select(ctl, "Colour range", [{ value: "strip", label: "per sub-step (±max of each strip)" },
                                           { value: "shared", label: "shared by all sub-steps of the layer" }], "strip",
    function (v) { S.scale = v; buildHeatmaps(); frame(); drawLegend(); }).id = "enc-scale";
  saveButton(ctl, canvas, "encoder-layer.png", function () { frame(); });
  saveButton(document.getElementById("enc-ffn-controls"), document.getElementById("enc-ffn"), "encoder-ffn.png");
  if (N.gamma_mean) saveButton(document.getElementById("enc-film-controls"), document.getElementById("enc-film"), "encoder-film.png");
  saveButton(document.getElementById("enc-evo-controls"), document.getElementById("enc-evo"), "encoder-feature-evolution.png");
}
function setPos(t) { S.pos = Math.max(0, Math.min(T - 1, t | 0)); posIn.value = S.pos; placeMarks(); panels(); }
var legendKey = null;
function drawLegend() {   // rebuilt only when its range or text changes (not on a sample switch per strip)
  var m = S.scale === "shared" ? hms[0].vmax : 1;
  var el = document.getElementById("nb-legend"), key = [S.scale, m, S.layer].join("|");
  if (key === legendKey && el.firstChild) return;
  legendKey = key;
  setLegends(el, [[CMAP, -m, m, S.scale === "shared" ? "value (shared range of layer " + S.layer + ")"
                                                    : "value relative to each strip max |value| (shown right of the strip)"]]);
}

/* ---------- hover / click ---------- */
function hoverLabel(hm, r, c, v, idx) {
  var s = steps[idx], nm = name(S.layer, s.suffix), rec = cap.record(nm);
  if (pending[idx]) return nm + " (" + s.label + "): computing…";
  return nm + " (" + s.label + ")\nt = " + c + " min, " + rec.axes[2] + " " + r + "\nvalue = " + fmt(v, 4);
}
function onClick(e) {
  var rc = canvas.getBoundingClientRect();
  for (var i = 0; i < hms.length; i++) {
    var cell = hms[i].cellAt(e.clientX - rc.left, e.clientY - rc.top);
    if (cell) { setPos(cell.col); return; }
  }
}
function buildPointer() {
  cursor = hoverGrid(canvas, hms, {
    ariaLabel: "residual stream heatmaps; arrow keys move over the first strip (rows: features, columns: minutes); Enter selects the time step",
    label: hoverLabel,
  });
  canvas.addEventListener("keydown", function (e) { if (e.key === "Enter") { e.preventDefault(); setPos(cursor.col); } });
  canvas.addEventListener("click", onClick);
}
function bindUrl() {
  var layerValues = tabButtons.map(function (b, i) { return String(i); });
  stateInUrl([["layer", { get: function () { return String(S.layer); }, set: function (raw) {
    var v = chooseOption(layerValues, raw);
    if (v !== undefined && Number(v) !== S.layer) setLayer(Number(v));
    return v !== undefined;
  } }], ["sample", "#enc-sample"], ["t", posIn], ["scale", "#enc-scale"]]);
}

function start(pg) {
  P = pg.data; PG = pg; N = P.names; cap = decode(blob("capture"));
  steps = P.steps.filter(function (s) { return cap.has(name(0, s.suffix)); });
  var inRec = cap.record(name(0, "in"));
  T = inRec.shape[1]; D = inRec.shape[2];
  S = { sample: 0, layer: 0, pos: Math.floor(T / 2), scale: "strip" };
  canvas = document.getElementById("enc-main"); overlay = document.getElementById("enc-main-overlay");
  fitCanvas(canvas);
  // a few tasks instead of one long one while loading (see core.inTasks)
  inTasks([function () { buildTabs(); buildControls(); syncTabs(); buildLater(); buildMarks(); }, buildHeatmaps,
           function () { buildPointer(); bindUrl(); frame(); drawLegend(); }, function () { drawFFN(); if (N.gamma_mean) drawFiLM(); }, finish]);
}

function finish() {
  setTimeout(drawEvo, 0);   // needs every layer's output: rebuilt one task after the first frame
  onResize(canvas, function () { frame(); panels(); });
  testHook({ pending: function () { return pending.some(Boolean); }, state: S, capture: cap, heatmaps: function () { return hms; }, steps: steps, setPos: setPos, setLayer: setLayer });
  ready();
}

registerPage({ slug: "encoder", start: start });

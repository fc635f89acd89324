/* page_attention.js: the attention page (spec attention.md 7, architecture.md 7).
 * One regl context on #att-main draws the large selected head and every head of the layer as small
 * multiples; each is rebuilt in attention_weights.frag from the captured q, k (RGBA float textures) and
 * lse. Hover values and the row chart come from capture.attentionRow (the decoder's exact rebuild).
 * Record names come from the view (page().data.names, nilmbuild/site/views/attention.py), never literals.
 * The page state lives in module variables set once by start(); each build, draw and on function does one job.
 * registerPage starts it; testHook exposes state for the browser tests (window.nilmbuild.test).
 */
import attWeightsFrag from "../glsl/attention_weights.frag";
import attWeightsVert from "../glsl/attention_weights.vert";
import { registerPage, testHook } from "./register.js";
import { stateInUrl } from "./url_state.js";
import { colormaps, legend, palette, setLegends } from "./colormaps.js";
import { afterReady, blob, context2d, controls, element, flushDeferred, fmt, font, inTasks, newTask, onResize, onScreen, overlay2d, placeAt, ready, saveButton, setText } from "./core.js";
import { decode } from "./decode.js";
import { watts } from "./disaggregation_watts.js";
import { gl } from "./gl.js";
import { fitCanvas, hoverGrid } from "./grid.js";
import { texCache as mapCache } from "./tex_cache.js";
import { plot2d } from "./plot2d.js";
import { stepTicks, stepTime, timeAxis, windowClock } from "./time_axis.js";
import { attentionWhatIf } from "./whatif_attention.js";
import { headMatrix as makeHeadMatrix } from "./head_matrix.js";
import { attentionArcs } from "./attention_arcs.js";
import { attentionLayers } from "./attention_layers.js";

var LOG_MIN = -4, LOG_MAX = 0;   // log10 colour domain: 1e-4 .. 1
var ARCS_K = 8;                  // strongest keys drawn as arcs

/* ---------- the page's state (one page per document; set by start) ---------- */
var P, PG, N, cap, S;            // payload data, the page (its model sizes), record names, capture, selection
var H, L, E, affine;             // heads, window, head dim (from the q record's shape); aggregate watts
var canvas, axes, regl, lutTex, drawHead, maps;   // maps: each head map drawn once per key (tex_cache.js)
var LAY, heatmaps = [], rowPlot = null, arcs = [], layersView = null, headMatrix = null, cursor = null;
var ui = {};                     // the controls that code sets: sample, layer, head selects, query range
var wi = null;                   // the live model: what-if panel and "your signal" (whatif_attention.js)
var cache = { tex: {}, row: {}, max: {} };

/* ---------- data: names from the view, textures on demand ---------- */
function weightsName(layer, masked) { return masked ? N.weights[layer] : N.weights_unmasked[layer]; }
function qkTex(name, sample) {
  var key = name + "#" + sample, T4 = Math.ceil(E / 4), TW = H * T4;
  if (cache.tex[key]) return cache.tex[key];
  var a = cap.slice(name, sample), data = new Float32Array(L * TW * 4); // (H, L, E) -> rows t, texels h*T4+d/4
  for (var h = 0; h < H; h++) for (var t = 0; t < L; t++) for (var d = 0; d < E; d++) {
    data[(t * TW + h * T4) * 4 + d] = a[(h * L + t) * E + d];
  }
  return (cache.tex[key] = regl.texture({ width: TW, height: L, data: data, format: "rgba", type: "float",
                                          min: "nearest", mag: "nearest" }));
}
function lseTex(name, sample) {
  var key = name + "#" + sample;
  if (cache.tex[key]) return cache.tex[key];
  return (cache.tex[key] = regl.texture({ width: L, height: H, data: cap.slice(name, sample), format: "luminance",
                                          type: "float", min: "nearest", mag: "nearest" }));
}
function current() {
  var w = cap.record(weightsName(S.layer, S.masked));
  return { w: w, q: qkTex(w.q, S.sample), k: qkTex(w.k, S.sample), lse: lseTex(w.lse, S.sample),
           scale: w.scale, mask: !!w.mask_diagonal };
}
function row(head, query) {
  var name = weightsName(S.layer, S.masked), key = name + "|" + S.sample + "|" + head + "|" + query;
  if (!cache.row[key]) {
    if (Object.keys(cache.row).length > 2000) cache.row = {};
    cache.row[key] = cap.attentionRow(name, S.sample, head, query);
  }
  return cache.row[key];
}
function rowMax(q, k, lse, w, h, i) {   // largest weight of query i of head h: exact, from q, k, lse
  var best = -Infinity, qo = (h * L + i) * E;
  for (var j = 0; j < L; j++) {
    if (w.mask_diagonal && i === j) continue;
    var s = 0, ko = (h * L + j) * E;
    for (var d = 0; d < E; d++) s += q[qo + d] * k[ko + d];
    if (s > best) best = s;
  }
  return Math.exp(best * w.scale - lse[h * L + i]);
}
function layerMax() {   // largest weight over the layer's heads (linear / sqrt scales)
  var name = weightsName(S.layer, S.masked), key = name + "|" + S.sample;
  if (cache.max[key] !== undefined) return cache.max[key];
  var w = cap.record(name), q = cap.slice(w.q, S.sample), k = cap.slice(w.k, S.sample), lse = cap.slice(w.lse, S.sample), m = 0;
  for (var h = 0; h < H; h++) for (var i = 0; i < L; i++) { var v = rowMax(q, k, lse, w, h, i); if (v > m) m = v; }
  return (cache.max[key] = m);
}
function aggregateW() {   // the input aggregate of the sample in watts (channel 0)
  var x = cap.slice(N.input, S.sample), n = cap.record(N.input).shape[2], out = new Float32Array(n);
  for (var t = 0; t < n; t++) out[t] = affine.a * x[t] + affine.b;
  return out;
}
function headColour(h) { return palette[h % palette.length]; }

/* ---------- the WebGL heads: a draw command, layout, hover adapters ---------- */
function findViews() {   // the maps' canvases, laid out
  canvas = document.getElementById("att-main"); axes = document.getElementById("att-main-axes");
  fitCanvas(canvas);
}
function openGL() { gl.open(canvas); }   // the context alone (gl.open), once gl.warm has paid software GL's start-up
function createGL() {   // regl on gl.open's context (its probes are synchronous: after prepare, the GPU has caught up)
  regl = gl.create(canvas, gl.FLOAT_TEXTURES);
  if (!regl) throw new Error("no WebGL context for the attention maps");
  if (!regl.hasExtension("oes_texture_float")) {
    throw new Error("this view needs WebGL float textures (OES_texture_float) to rebuild attention on the GPU");
  }
}
function buildGL() {   // the colour LUT, the map cache and the draw command (shaders compiled here)
  lutTex = regl.texture({ width: 256, height: 1, data: colormaps.lut(S.cmap), min: "nearest", mag: "nearest" });
  maps = mapCache(regl, 64e6);
  var T4 = Math.ceil(E / 4);
  drawHead = regl({
    vert: attWeightsVert, frag: attWeightsFrag,
    attributes: { position: [-1, -1, 1, -1, -1, 1, -1, 1, 1, -1, 1, 1] }, count: 6,
    uniforms: {
      qTex: regl.prop("q"), kTex: regl.prop("k"), lseTex: regl.prop("lse"), lut: lutTex,
      L: L, heads: H, texPerHead: T4, texWidth: H * T4, head: regl.prop("head"), scale: regl.prop("scale"),
      maskDiagonal: regl.prop("mask"), mode: regl.prop("mode"), vmax: regl.prop("vmax"),
      logMin: LOG_MIN, logMax: LOG_MAX,
    },
    viewport: regl.prop("viewport"), scissor: { enable: true, box: regl.prop("viewport") }, depth: { enable: false },
  });
}
var SMALL_LABEL_W = 42;   // a small multiple's "head h" label, right of its 8 px colour swatch
function layout() {   // large head left, one small multiple per head right; a phone: the small multiples below it
  var W = canvas.clientWidth, Hh = canvas.clientHeight;
  var padL = 66, padT = 26, padB = 44, gap = 28;   // padL: a clock tick ("16:00") and the rotated query label
  if (W < 560) return layoutBelow(W, Hh, padL, padT, padB);
  var big = Math.floor(Math.max(80, Math.min(Hh - padT - padB, (W - padL - gap) * 0.64)));
  var smallW = W - padL - big - gap - 8, cols = 2, rows = Math.ceil(H / cols), x0 = padL + big + gap;
  var labelRoom = (W - 2 - x0 - 12 - SMALL_LABEL_W) / (cols - 1) - 10;   // the last column's label inside the canvas
  var cell = Math.floor(Math.max(24, Math.min((smallW - 10) / cols, (Hh - padT - 8 - 16 * rows) / rows, labelRoom)));
  return grid({ x: padL, y: padT, width: big, height: big }, x0, padT, cols, cell);
}
function layoutBelow(W, Hh, padL, padT, padB) {   // a narrow screen: the large head full width, the heads in rows of 4 under it
  var cols = Math.min(H, 4), rows = Math.ceil(H / cols), room = W - padL - 8;
  var cell = Math.floor(Math.max(24, (room - (cols - 1) * 10) / cols));
  var big = Math.floor(Math.max(80, Math.min(room, Hh - padT - padB - rows * (cell + 16) - 8)));
  cell = Math.floor(Math.min(cell, (big - (cols - 1) * 10) / cols));
  return grid({ x: padL, y: padT, width: big, height: big }, padL, padT + big + padB + 16, cols, cell);
}
function grid(big, x0, y0, cols, cell) {   // the layout: the large head's box and the small multiples from (x0, y0)
  var out = { big: big, small: [] };
  for (var h = 0; h < H; h++) out.small.push({ x: x0 + (h % cols) * (cell + 10), y: y0 + Math.floor(h / cols) * (cell + 16), width: cell, height: cell });
  return out;
}
function adapter(getHead, boxRef) {   // heatmap2d's hover interface (grid.js hoverGrid) over one head's box
  return {
    rows: L, cols: L,
    get box() { return boxRef(); },
    get head() { return getHead(); },
    value: function (r, c) { return row(getHead(), r)[c]; },
    cellAt: function (px, py) {
      var b = boxRef();
      if (!b || px < b.x || py < b.y || px >= b.x + b.width || py >= b.y + b.height) return null;
      var c = Math.min(L - 1, Math.floor(((px - b.x) / b.width) * L)), r = Math.min(L - 1, Math.floor(((py - b.y) / b.height) * L));
      return { row: r, col: c, value: this.value(r, c) };
    },
    cellBox: function (r, c) {
      var b = boxRef(), w = b.width / L, h = b.height / L;
      return { x: b.x + c * w, y: b.y + r * h, width: Math.max(w, 1), height: Math.max(h, 1) };
    },
  };
}
function buildHeatmaps() {
  LAY = layout();
  heatmaps.push(adapter(function () { return S.head; }, function () { return LAY.big; }));
  for (var h0 = 0; h0 < H; h0++) {
    (function (h) { heatmaps.push(adapter(function () { return h; }, function () { return LAY.small[h]; })); })(h0);
  }
}
function toViewport(b) {
  var sx = canvas.width / canvas.clientWidth, sy = canvas.height / canvas.clientHeight;
  var x0 = Math.round(b.x * sx), x1 = Math.round((b.x + b.width) * sx);
  var y0 = Math.round(b.y * sy), y1 = Math.round((b.y + b.height) * sy);
  return { x: x0, y: canvas.height - y1, width: x1 - x0, height: y1 - y0 };
}

/* ---------- drawing ---------- */
function frame() {
  fitCanvas(canvas);
  LAY = layout();
  regl.poll();
  regl.clear({ color: [1, 1, 1, 1] });
  var c = current(), mode = S.mode === "log" ? 2 : S.mode === "sqrt" ? 1 : 0;
  var vmax = mode === 2 ? 1 : layerMax() || 1;
  var base = { q: c.q, k: c.k, lse: c.lse, scale: c.scale, mask: c.mask, mode: mode, vmax: vmax };
  var key = [c.w.name, S.sample, mode, vmax, S.cmap].join("|");
  function one(h, box) { maps.draw(key + "|" + h, toViewport(box), function (vp) { drawHead(Object.assign({}, base, { head: h, viewport: vp })); }); }
  one(S.head, LAY.big);
  for (var h = 0; h < H; h++) one(h, LAY.small[h]);
  S.vmax = vmax;
  drawAxes();
}
// the shown sample's window in clock time (UTC): its start (the page's sample label), one step per model step
function sampleClock() { return windowClock(P.sample_labels[S.sample], PG.model.step_minutes * 60); }
function drawTicks(g, b) {   // key ticks below the large head, query ticks left of it, in clock time (UTC)
  var ticks = stepTicks(sampleClock(), 0, L - 1, Math.min(6, Math.floor(b.width / 55)));
  g.textAlign = "center"; g.textBaseline = "top";
  ticks.forEach(function (t) {
    var x = b.x + ((t.step + 0.5) / L) * b.width;
    g.beginPath(); g.moveTo(x, b.y + b.height); g.lineTo(x, b.y + b.height + 4); g.stroke();
    g.fillText(t.label, x, b.y + b.height + 6);
  });
  g.fillText("key s (time, UTC)", b.x + b.width / 2, b.y + b.height + 22);
  g.textAlign = "right"; g.textBaseline = "middle";
  ticks.forEach(function (t) {
    var y = b.y + ((t.step + 0.5) / L) * b.height;
    g.beginPath(); g.moveTo(b.x - 4, y); g.lineTo(b.x, y); g.stroke();
    g.fillText(t.label, b.x - 6, y);
  });
  g.save(); g.translate(12, b.y + b.height / 2); g.rotate(-Math.PI / 2); g.textAlign = "center";
  g.fillText("query t (time, UTC)", 0, 0); g.restore();
}
function drawSmallLabels(g) {   // small-multiple labels and head colours (the selection frame is a mark)
  for (var h = 0; h < H; h++) {
    var s = LAY.small[h];
    g.fillStyle = "#1b1f24"; g.textBaseline = "bottom"; g.textAlign = "left";
    g.fillText("head " + h, s.x + 12, s.y - 2);
    g.fillStyle = headColour(h); g.fillRect(s.x, s.y - 11, 8, 8);
  }
  g.lineWidth = 1;
}
var axesKey = null;
function drawAxes() {   // what is drawn for a layout only: ticks and the small multiples' labels (a redrawn 2D
  // canvas is re-uploaded whole); the title, query marks and the selected head's frame are DOM (placeMarks)
  var W = canvas.clientWidth, Hh = canvas.clientHeight, b = LAY.big;
  placeMarks();
  var key = [W, Hh, window.devicePixelRatio, b.x, b.y, b.width, P.sample_labels[S.sample]].join("|");
  if (key === axesKey) return;
  axesKey = key;
  var g = overlay2d(axes, W, Hh);
  plot2d.recordText(g, axes);   // every label's box, for the overlap tests
  g.font = font(12);
  g.fillStyle = "#1b1f24"; g.strokeStyle = "#57606a";
  drawTicks(g, b);
  drawSmallLabels(g);
}

// The marks that follow the controls, as elements over the axes canvas: moving one repaints a few pixels, where
// redrawing the overlay cost ~20 % of a frame on a head, layer or query change (SwiftShader).
var marks = null;
function buildMarks() {
  var wrap = document.getElementById("att-main-wrap");
  marks = { title: element("div", { class: "att-mark att-title" }), qLeft: element("div", { class: "att-mark att-qmark" }),
            qRight: element("div", { class: "att-mark att-qmark" }), frame: element("div", { class: "att-mark att-frame" }) };
  Object.keys(marks).forEach(function (k) { wrap.appendChild(marks[k]); });
}
function placeMarks() {
  var b = LAY.big, s = LAY.small[S.head], qy = b.y + ((S.query + 0.5) / L) * b.height;
  var title = "layer " + S.layer + ", head " + S.head + (S.masked ? " (diagonal masked)" : " (mask off: ablation run)");
  setText(marks.title, title);
  placeAt(marks.title, b.x, b.y - 6);
  placeAt(marks.qLeft, b.x - 10, qy);
  placeAt(marks.qRight, b.x + b.width + 2, qy);
  placeAt(marks.frame, s.x - 3.25, s.y - 3.25, s.width + 6.5, s.height + 6.5);
}

/* ---------- row chart (plot2d), head split (2D), readout, legend, arcs ---------- */
function drawRow() {
  var w = row(S.head, S.query), keys = new Float32Array(L);
  for (var j = 0; j < L; j++) keys[j] = j;
  var p = plot2d.create(document.getElementById("att-row"), {
    title: "Sample " + P.samples[S.sample] + ", layer " + S.layer + ", head " + S.head + ": query t = " + S.query + " min (" +
           stepTime(sampleClock(), S.query) + ")",
    x: timeAxis(P.sample_labels[S.sample], PG.model.step_minutes * 60, L, "time (key s)"),
    lanes: [
      { title: "input aggregate", height: 0.8, y: { label: "aggregate", unit: "W" },
        series: [{ name: "aggregate power (W)", x: keys, y: aggregateW(), kind: "area", color: "#56B4E9" }] },
      { title: "attention weight", height: 1.2, y: { label: "weight", unit: "", min: 0 },
        series: [{ name: "weight of query " + S.query + " on key s", x: keys, y: w, kind: "bar", color: headColour(S.head) }] },
    ],
  });
  fitCanvas(document.getElementById("att-row"));
  p.setCursor(S.query);
  p.draw();
  rowPlot = p;
}
function splitParts() {   // [label, record] of the q, k (and v of the model run) vectors split into heads
  var wr = cap.record(weightsName(S.layer, S.masked)), vName = N.v[S.layer];  // the unmasked run keeps only q, k, lse
  var parts = [["q", wr.q], ["k", wr.k]];
  if (cap.has(vName) && S.masked) parts.push(["v", vName]);
  return parts;
}
function splitVector(name) {   // the (H * E) vector of one record at the query
  var a = cap.slice(name, S.sample), v = new Float32Array(H * E);
  for (var h = 0; h < H; h++) for (var d = 0; d < E; d++) v[h * E + d] = a[(h * L + S.query) * E + d];
  return v;
}
function drawSplitLane(g, v, label, y0, box) {   // one vector's bars over the head bands, scaled to its |max|
  var amax = 0; for (var i = 0; i < v.length; i++) amax = Math.max(amax, Math.abs(v[i])); amax = amax || 1;
  var D = H * E, bw = (box.W - box.left - box.right) / D, mid = y0 + box.laneH / 2;
  for (var h = 0; h < H; h++) {
    g.fillStyle = h === S.head ? "rgba(213,94,0,0.10)" : (h % 2 ? "#f6f8fa" : "#fff");
    g.fillRect(box.left + h * E * bw, y0, E * bw, box.laneH);
  }
  g.strokeStyle = "#c9d1d9"; g.beginPath(); g.moveTo(box.left, mid); g.lineTo(box.W - box.right, mid); g.stroke();
  for (i = 0; i < D; i++) {
    var hh = (v[i] / amax) * (box.laneH / 2 - 2);
    g.fillStyle = headColour(Math.floor(i / E));
    g.fillRect(box.left + i * bw + 0.5, hh >= 0 ? mid - hh : mid, Math.max(1, bw - 1), Math.abs(hh));
  }
  g.fillStyle = "#1b1f24"; g.textAlign = "right"; g.textBaseline = "middle";
  g.font = '600 13px system-ui, sans-serif'; g.fillText(label, box.left - 8, mid - 8);
  g.font = '11px system-ui, sans-serif'; g.fillStyle = "#57606a";
  g.fillText("±" + fmt(amax, 3), box.left - 8, mid + 8);
}
function drawSplit() {
  var splitCanvas = document.getElementById("att-split");
  fitCanvas(splitCanvas);
  var dpr = window.devicePixelRatio || 1, W = splitCanvas.clientWidth, Hh = splitCanvas.clientHeight;
  var g = context2d(splitCanvas);
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.fillStyle = "#fff"; g.fillRect(0, 0, W, Hh);
  plot2d.recordText(g, splitCanvas);
  var parts = splitParts(), D = H * E;
  g.textBaseline = "bottom"; g.fillStyle = "#1b1f24"; g.textAlign = "left"; g.font = font(13, 600);
  var title = plot2d.wrap(g, "layer " + S.layer + ": the " + D + "-d " + parts.map(function (p) { return p[0]; }).join(", ") + " vectors at t = " + S.query +
             " min, split into " + H + " heads × " + E + (S.masked ? "" : " (unmasked run: q, k only)"), W - 8);
  var tx = title.length > 1 || g.measureText(title[0]).width > W - 64 - 4 ? 4 : 64;   // from the lanes' left edge when it fits there
  title.forEach(function (line, k) { g.fillText(line, tx, 16 + 15 * k); });
  g.font = font(12);
  var heads = headLabels(g, (W - 64 - 12) / H), top = 22 + 15 * (title.length - 1), foot = 40 + 14 * (heads.rows - 1);
  var box = { W: W, left: 64, right: 12, laneH: (Hh - top - foot - 6 * (parts.length - 1)) / parts.length };
  var bw = (W - box.left - box.right) / D, bottom = top + parts.length * (box.laneH + 6);
  parts.forEach(function (pt, pi) { drawSplitLane(g, splitVector(pt[1]), pt[0], top + pi * (box.laneH + 6), box); });
  g.textAlign = "center"; g.textBaseline = "top";
  for (var h = 0; h < H; h++) {
    g.fillStyle = headColour(h);
    g.fillText(heads.text[h], box.left + (h + 0.5) * E * bw, bottom + 4 + 14 * (h % heads.rows));
  }
  g.fillStyle = "#57606a";
  var note = "feature index 0 … " + (D - 1) + " (head h owns features " + E + "h … " + E + "h + " + (E - 1) + ")", hw = g.measureText(note).width / 2;
  g.fillText(note, Math.max(hw + 2, Math.min(W - hw - 2, box.left + (W - box.left - box.right) / 2)), bottom + 4 + 14 * heads.rows);
}
function headLabels(g, room) {   // "head h" under each head's features, on two staggered rows where they do not fit in one
  var text = [];
  for (var h = 0; h < H; h++) text.push("head " + h);
  var widest = Math.max.apply(null, text.map(function (t) { return g.measureText(t).width; }));
  return { text: text, rows: widest + 4 <= room ? 1 : 2 };
}
function drawReadout() {
  var w = row(S.head, S.query), best = 0;
  for (var j = 1; j < L; j++) if (w[j] > w[best]) best = j;
  var el = document.getElementById("att-readout");
  el.textContent = "Sample " + P.samples[S.sample] + " (window from " + P.sample_labels[S.sample] + "), layer " + S.layer +
    ", head " + S.head + ", query t = " + S.query + " min: strongest key s = " + best + " min (weight " + fmt(w[best], 4) +
    "); weight on itself " + fmt(w[S.query], 4) + (S.masked ? " (masked)" : " (mask off)") + ".";
}
var legendKey = null;
function drawLegend() {   // rebuilt only when its scale changes (not on a sample switch in the log scale)
  var el = document.getElementById("nb-legend"), key = [S.mode, S.cmap, S.mode === "log" ? 0 : S.vmax].join("|");
  if (key === legendKey && el.firstChild) return;
  legendKey = key;
  var spec = S.mode === "log" ? [S.cmap, LOG_MIN, LOG_MAX, "log₁₀ attention weight (1e-4 … 1; masked diagonal = 0 → darkest)"]
    : S.mode === "sqrt" ? [S.cmap, 0, S.vmax, "attention weight, square-root scale (colour ∝ √w, 0 … layer max)"]
    : [S.cmap, 0, S.vmax, "attention weight, linear (0 … layer max)"];
  setLegends(el, [spec])[0].dataset.mode = S.mode;
}
function drawArcs() {   // arcs at the selected query
  arcs = attentionArcs.draw(document.getElementById("att-arcs"), { query: S.query, weights: row(S.head, S.query), k: ARCS_K, agg: aggregateW(),
    unit: affine ? "W" : "(scaled)", colour: headColour(S.head),
    title: "layer " + S.layer + ", head " + S.head + (S.masked ? "" : " (mask off)") + ": the " + ARCS_K + " strongest keys of query t = " + S.query + " min" });
}
var later = {};   // the views below the heads, drawn when on screen (core.onScreen; set by buildLater)
function buildLater() {
  ["row", "split", "arcs", "layers"].forEach(function (k) { later[k] = onScreen(document.getElementById("att-" + k)); });
}
function drawBelow() {   // row chart, head split, arcs (what the query changes)
  later.row(drawRow); later.split(drawSplit); later.arcs(drawArcs);
}
function redraw(all) {
  if (wi) wi.update();
  frame(); drawLegend();
  if (all !== false) { drawBelow(); if (layersView) later.layers(function () { layersView.draw(S.head, S.sample); }); }
  drawReadout();
}
function setQuery(t) {
  S.query = Math.max(0, Math.min(L - 1, t | 0));
  ui.query.value = S.query;
  drawAxes(); drawBelow(); drawReadout(); if (wi) wi.update();
}

/* ---------- controls ---------- */
function options(n, label) { var out = []; for (var i = 0; i < n; i++) out.push({ value: i, label: label + " " + i }); return out; }
function buildSelects(ctl) {
  ui.sample = controls.select(ctl, "Sample", P.samples.map(function (s, i) {
    return { value: i, label: "batch sample " + s + " · " + P.sample_labels[i] };
  }), 0, function (v) { S.sample = Number(v); redraw(); });
  ui.sample.id = "att-sample";
  ui.layer = controls.select(ctl, "Layer", options(P.n_layers, "layer"), 0, function (v) { S.layer = Number(v); redraw(); });
  ui.layer.id = "att-layer";
  ui.head = controls.select(ctl, "Head", options(H, "head"), 0, function (v) { S.head = Number(v); redraw(); });
  ui.head.id = "att-head";
}
function buildControls() {
  var ctl = document.getElementById("nb-controls");
  buildSelects(ctl);
  controls.checkbox(ctl, "Diagonal mask (model run; untick: real unmasked ablation run)", true,
    function (on) { S.masked = on; redraw(); }).id = "att-mask";
  ui.query = controls.range(ctl, "Query t (min)", 0, L - 1, 1, S.query, function (v) { setQuery(v); });
  ui.query.id = "att-query";
  controls.select(ctl, "Colour scale", [{ value: "log", label: "log₁₀ (1e-4 … 1)" }, { value: "sqrt", label: "square root (0 … max)" },
                                           { value: "linear", label: "linear (0 … max)" }], "log",
    function (v) { S.mode = v; redraw(false); }).id = "att-scale";
  controls.select(ctl, "Colormap", ["viridis", "cividis"], "viridis", function (v) {
    S.cmap = v; lutTex({ width: 256, height: 1, data: colormaps.lut(v), min: "nearest", mag: "nearest" }); redraw(false);
  }).id = "att-cmap";
  saveButton(ctl, canvas, "attention-heads.png", function () { frame(); });
  saveButton(document.getElementById("att-row-controls"), document.getElementById("att-row"), "attention-row.png");
  saveButton(document.getElementById("att-split-controls"), document.getElementById("att-split"), "attention-head-split.png");
  saveButton(document.getElementById("att-arcs-controls"), document.getElementById("att-arcs"), "attention-arcs.png");
}

/* ---------- hover, keyboard, click ---------- */
function onClick(e) {   // the large head: select the query row; a small multiple: select that head
  var r = canvas.getBoundingClientRect(), px = e.clientX - r.left, py = e.clientY - r.top;
  var big = heatmaps[0].cellAt(px, py);
  if (big) { cursor.row = big.row; cursor.col = big.col; setQuery(big.row); return; }
  for (var h = 0; h < H; h++) {
    if (heatmaps[h + 1].cellAt(px, py)) { S.head = h; ui.head.value = h; redraw(); return; }
  }
}
function buildPointer() {
  cursor = hoverGrid(canvas, heatmaps, {
    ariaLabel: "attention weights of the selected head: rows are queries, columns are keys; Enter selects the query row",
    label: function (hm, r, c, v) {
      return "layer " + S.layer + ", head " + hm.head + (S.masked ? "" : " (mask off)") +
        "\nquery t = " + r + " min\nkey s = " + c + " min\nweight = " + fmt(v, 4);
    },
  });
  canvas.addEventListener("keydown", function (e) {
    if (e.key === "Enter" || e.key === " ") { e.preventDefault(); setQuery(cursor.row); }
  });
  canvas.addEventListener("click", onClick);
}

/* ---------- the head across layers, and the head ablation matrix ---------- */
function buildLayers() {
  layersView = attentionLayers.create(document.getElementById("att-layers"), document.getElementById("att-layers-axes"), cap,
                                      { layers: P.n_layers, weights: N.weights, head: S.head, sample: S.sample, later: later.layers });
}
function onHeadPicked(layer, head, sample, c) {   // a matrix cell -> that head on the sample where its effect is largest
  S.layer = layer; S.head = head; S.sample = Math.max(0, P.samples.indexOf(sample));
  ui.layer.value = layer; ui.head.value = head; ui.sample.value = S.sample;
  redraw();
  document.getElementById("att-heads-readout").textContent = "Opened layer " + layer + ", head " + head + " on batch sample " +
    sample + ": zeroing it changes " + c.deviceName + " by " + fmt(c.value, 4) + " W on average over the ablated samples.";
  canvas.scrollIntoView({ block: "nearest" });
}
function hasHeadMatrix() { return P.head_ablation && cap.has(N.head_delta); }
function buildHeadMatrix() {
  if (!hasHeadMatrix()) return;
  headMatrix = makeHeadMatrix.create(document.getElementById("att-heads"), document.getElementById("att-heads-axes"), cap, {
    names: { delta: N.head_delta, sample: N.head_sample },
    onPick: function (l, h, s, c) { c.deviceName = String(cap.meta.devices[c.device]).replace(/_/g, " "); onHeadPicked(l, h, s, c); },
  });
  if (headMatrix) legend(document.getElementById("att-heads-legend"), "viridis", 0, headMatrix.vmax,
                         "mean |change in the device's watts| when the head is zeroed (W)");
}

function exposeForTests() {
  testHook({
    state: S, capture: cap, heatmaps: heatmaps, layout: function () { return LAY; }, row: row,
    frame: frame, rowPlot: function () { flushDeferred(); return rowPlot; }, headMatrix: headMatrix,
    arcs: function () { flushDeferred(); return arcs.map(function (a) { return { query: S.query, key: a.key, weight: a.weight }; }); },
    layers: layersView, whatif: wi,
  });
}

// The first WebGL context's software-GL start-up (0.05-0.5 s) is paid in a worker (gl.warm), started in the page's <head>,
// while the capture is decoded and the controls, marks and pointer are built; then the context in a task of its own (now
// ~10-30 ms) and regl's synchronous probes: no long task while loading; the heads first (ready), then the views
// further down: the layers view and the head matrix (core.afterReady)
var warm = gl.warm();
function start(pg) {
  P = pg.data; N = P.names; PG = pg;
  inTasks([newTask, function () { load(); prepare(); }, findViews,
           function () { buildMarks(); buildHeatmaps(); buildControls(); buildPointer(); buildLater(); },
           function () { return warm; }, openGL, createGL, buildGL, upload, finish]);
}
function load() {   // the capture, its sizes and the first selection
  cap = decode(blob("capture"));
  var q0 = cap.record(N.q[0]);
  H = q0.shape[1]; L = q0.shape[2]; E = q0.shape[3];
  affine = watts.of("aggregate");
  S = { sample: 0, layer: 0, head: 0, query: Math.min(L - 1, Math.floor(L / 2)), masked: true, mode: "log", cmap: "viridis" };
}
function buildBelow() {
  // the layers view's context first (gl.open), drawBelow while the GPU process sets it up, then regl on it
  afterReady([function () { gl.open(document.getElementById("att-layers")); }, drawBelow, buildLayers, function () { if (layersView) later.layers(function () { layersView.draw(S.head, S.sample); }); },
              buildHeadMatrix,
              function () { testHook({ layers: layersView, headMatrix: headMatrix }); }]);
}

function prepare() {   // decode what the first frame reads (q, k, lse; the selected row) in a task of its own
  var w = cap.record(weightsName(S.layer, S.masked));
  cap.slice(w.q, S.sample); cap.slice(w.k, S.sample); cap.slice(w.lse, S.sample);
  row(S.head, S.query); aggregateW();
}
function upload() { current(); }   // the first frame's textures

function finish() {
  wi = attentionWhatIf({ after: document.getElementById("att-readout"), cap: cap, state: S, sampleLabel: function (i) { return "batch sample " + P.samples[i]; } });
  stateInUrl([["sample", "#att-sample"], ["layer", "#att-layer"], ["head", ui.head], ["mask", "#att-mask"], ["source", "#att-source"],
              ["t", ui.query], ["scale", "#att-scale"], ["cmap", "#att-cmap"]]);
  redraw(false);   // the heads, legend and readout; the views below follow ready (buildBelow)
  onResize(canvas, function () { frame(); drawBelow(); });
  exposeForTests();
  ready();
  buildBelow();
}

registerPage({ slug: "attention", start: start });

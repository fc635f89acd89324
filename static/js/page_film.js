/* page_film.js: the FiLM page (architecture.md 8, encoder-film.md 6.6).
 * Views: condition features + spectrum with band edges (Canvas2D); the two FiLM MLPs with their captured
 * activations (Canvas2D cells); gamma/beta per device/layer + device mean + device embeddings; live FiLM of the
 * encoder's FFN output with sliders (two feature x time grids + plot2d), checked against the captured FiLM output;
 * FiLM on/off ablation (plot2d). Every grid is a heatmap2d.js on a 2D canvas: no WebGL context to create (100-300
 * ms of a load in software GL), a few ms of JS per redraw.
 * Record names come from the view (page().data.names, nilmbuild/site/views/film.py), never literals. The page
 * state lives in module variables set once by run(); each build, draw and on function does one job.
 */
import { registerPage, testHook } from "./register.js";
import { stateInUrl } from "./url_state.js";
import { colormaps, palette, setLegends } from "./colormaps.js";
import { escapeHTML, patchHTML } from "./dom_patch.js";
import { controls, flushDeferred, fmt, inTasks, onScreen, ready, tooltip } from "./core.js";
import { kit } from "./film_kit.js";
import { fitCanvas, hoverGrid } from "./grid.js";
import { clear2d, heatmap2d } from "./heatmap2d.js";
import { plot2d } from "./plot2d.js";
import { stepTicks, stepTime } from "./time_axis.js";
import { filmWhatIf } from "./whatif_film.js";

var fr = Math.fround;

var LIVE_PX = 240;   // height of each live-FiLM heatmap, CSS px

var ELEC_MEANING = {
  mean: "average level", std: "variability", rms: "effective level", peak: "largest |value|", crest: "peak / rms (peakiness)",
};

// live FiLM: (1 + g') x + b' in float64, rounded once to float32 (as the capture's film op)
function filmValue(x, g, b, p) {
  var gg = g * p.gs + p.go, bb = b * p.bs + p.bo, y = (1 + gg) * x + bb;
  if (y !== y) y = 0; else if (y === Infinity) y = 1e4; else if (y === -Infinity) y = -1e4;
  return fr(y);
}

/* ---------------- the page's state (one page per document; set by run) ---------------- */
var N, cap, extra, devs, D, NL, F, L, state, aggW, layerSel;
var mlp = { canvas: null, cells: [] };
var params = { stack: null, canvas: null, overlay: null, hms: [], defs: [], boxes: [] };  // heatmaps on a 2D canvas
var lv = { stack: null, canvas: null, overlay: null, plotCanvas: null, hms: [], plot: null, boxes: [], sliders: null };
var live0 = { x: null, xT: null, film: null, g: null, b: null };
var abl = { canvas: null, plot: null }, wi = null;  // wi: the live what-if panel (whatif_film.js)

/* ---------------- 1: condition features ---------------- */
function condTable(elec, bands, edges) {
  var html = "<thead><tr><th scope=col>feature</th><th scope=col>meaning</th><th scope=col>value</th></tr></thead><tbody>";
  extra.elec_features.forEach(function (n, k) {
    // in watts only where the conversion has no offset (then std and peak scale like the signal)
    var w = n === "crest" || aggW.ab.b !== 0 ? "" : " <span class=nb-muted>(" + fmt(aggW.f(elec[k]), 4) + " W)</span>";
    var e = escapeHTML(n);
    html += "<tr><td>" + e + "</td><td>" + (ELEC_MEANING[n] || "") + "</td><td class=num data-key='elec-" + e + "' data-value='" + elec[k] + "'>" + fmt(elec[k], 5) + w + "</td></tr>";
  });
  for (var b = 0; b < bands.length; b++) {
    html += "<tr><td>band " + b + "</td><td>bins " + edges[b] + "–" + (edges[b + 1] - 1) + "</td><td class=num data-key='band-" + b + "' data-value='" + bands[b] + "'>" + fmt(bands[b], 5) + "</td></tr>";
  }
  patchHTML(document.getElementById("film-cond-table"), html + "</tbody>");
}
function spectrumScales(spec, m, pw, ph) {   // log y (magnitudes span decades), x by frequency bin
  var n = spec.length, ymax = 0; for (var k = 1; k < n; k++) ymax = Math.max(ymax, spec[k]); ymax = ymax || 1;
  var lo = Math.max(ymax * 1e-4, 1e-9), ly = function (v) { return Math.log10(Math.max(v, lo)); };
  return { n: n, lo: lo, ymax: ymax, ly: ly,
           X: function (kk) { return m.l + (kk / (n - 1)) * pw; },
           Y: function (v) { return m.t + (1 - (ly(v) - ly(lo)) / (ly(ymax) - ly(lo))) * ph; } };
}
function drawSpectrumCurves(g, spec, bands, edges, s, m, ph) {
  var X = s.X, Y = s.Y, n = s.n, b, k;
  for (b = 0; b < edges.length - 1; b++) {
    if (b % 2 === 0) { g.fillStyle = "#f6f8fa"; g.fillRect(X(edges[b]), m.t, X(edges[b + 1] - 1) - X(edges[b]), ph); }
  }
  g.strokeStyle = "#57606a"; g.strokeRect(m.l + 0.5, m.t + 0.5, s.pw, ph);
  g.strokeStyle = palette[0]; g.lineWidth = 1.25; g.beginPath();
  for (k = 0; k < n; k++) { if (k) g.lineTo(X(k), Y(spec[k])); else g.moveTo(X(k), Y(spec[k])); }
  g.stroke();
  g.setLineDash([4, 3]); g.strokeStyle = "#1b1f24"; g.lineWidth = 1;
  edges.forEach(function (e) { var x = X(Math.min(e, n - 1)); g.beginPath(); g.moveTo(x, m.t); g.lineTo(x, m.t + ph); g.stroke(); });
  g.setLineDash([]); g.strokeStyle = palette[3]; g.lineWidth = 3;
  for (b = 0; b < bands.length; b++) { g.beginPath(); g.moveTo(X(edges[b]), Y(bands[b])); g.lineTo(X(edges[b + 1] - 1), Y(bands[b])); g.stroke(); }
}
// Where the legend's second item ("band mean") goes: after the first on its line, else on a line of its own (a phone).
function legendSpot(g, W, left) {
  g.font = kit.FONT;
  var x = left + 36 + g.measureText("|rFFT| of the centred aggregate").width;
  return x + 18 + g.measureText("band mean (" + N.cond.bands + ")").width > W - 4 ? { x: left, y: 40 } : { x: x, y: 26 };
}
function drawSpectrumLabels(g, edges, s, m, W, H, ph, i) {
  g.fillStyle = "#57606a"; g.font = kit.FONT; g.textAlign = "center";
  edges.forEach(function (e) { g.fillText(String(e), s.X(Math.min(e, s.n - 1)), m.t + ph + 12); });
  g.textAlign = "right";
  for (var dec = Math.ceil(s.ly(s.lo)); dec <= Math.floor(s.ly(s.ymax)); dec++) g.fillText("1e" + dec, m.l - 5, s.Y(Math.pow(10, dec)));
  g.fillStyle = "#1b1f24"; g.textAlign = "center";
  var xTitle = "frequency bin k (k cycles per " + L + "-min window); dashed: band edges";
  if (g.measureText(xTitle).width > W - 8) xTitle = "frequency bin k (cycles per " + L + " min)";   // a phone: the band edges are in the text above
  g.fillText(xTitle, Math.max(g.measureText(xTitle).width / 2 + 2, m.l + s.pw / 2), H - 10);
  g.save(); g.translate(13, m.t + ph / 2); g.rotate(-Math.PI / 2); g.fillText("|rFFT| (log)", 0, 0); g.restore();
  var title = N.cond.spectrum + " · " + kit.sampleLabel(extra, i);
  g.textAlign = "left"; g.font = kit.BOLD; g.fillText(title, g.measureText(title).width <= W - m.l - 4 ? m.l : 4, 10);
  g.font = kit.FONT; g.textAlign = "left";
  var second = "band mean (" + N.cond.bands + ")", sp = legendSpot(g, W, m.l), lx = sp.x, ly = sp.y;
  g.fillStyle = palette[0]; g.fillRect(m.l, 24, 14, 3); g.fillStyle = "#1b1f24"; g.fillText("|rFFT| of the centred aggregate", m.l + 18, 26);
  g.fillStyle = palette[3]; g.fillRect(lx, ly - 2, 14, 3); g.fillStyle = "#1b1f24"; g.fillText(second, lx + 18, ly);
}
function drawCond() {
  var i = state.sample, elec = cap.slice(N.cond.elec, i), bands = cap.slice(N.cond.bands, i), spec = cap.slice(N.cond.spectrum, i);
  var edges = extra.band_edges;
  condTable(elec, bands, edges);
  var c = kit.ctx2d(document.getElementById("film-spectrum")), g = c.g, W = c.W, H = c.H, m = { l: 56, r: 12, t: 38, b: 38 };
  if (legendSpot(g, W, m.l).y > 26) m.t = 52;   // room for the legend's second line
  var pw = W - m.l - m.r, ph = H - m.t - m.b, s = spectrumScales(spec, m, pw, ph);
  s.pw = pw;
  g.fillStyle = "#fff"; g.fillRect(0, 0, W, H);
  drawSpectrumCurves(g, spec, bands, edges, s, m, ph);
  drawSpectrumLabels(g, edges, s, m, W, H, ph, i);
}

/* ---------------- 2: MLP diagram ---------------- */
function cellRow(g, x, y, w, h, vals, label, key, maxAbs, keyAt) {   // keyAt: {room: px for a one-line key, right: end it at the row's right}
  var n = vals.length, cw = w / n, m = maxAbs || kit.absmax(vals);
  for (var k = 0; k < n; k++) {
    g.fillStyle = colormaps.css("burd", 0.5 + 0.5 * vals[k] / m);
    g.fillRect(x + k * cw, y, Math.max(1, cw - (cw > 4 ? 1 : 0)), h);
    mlp.cells.push({ x: x + k * cw, y: y, w: cw, h: h, v: vals[k], label: label + "[" + k + "]" });
  }
  g.strokeStyle = "#8c959f"; g.lineWidth = 1; g.strokeRect(x - 0.5, y - 0.5, w + 1, h + 1);
  var at = keyAt || {};
  if (key) rowKey(g, key, "(max |v| " + fmt(m, 3) + ")", at.right ? x + w : x, y + h + 9, at.room || g.canvas.clientWidth - x - 4, at.right);
}
// A cell row's key under it: "key  (max |v| m)" on one line where it fits in `room` px, else on two lines (a phone).
function rowKey(g, key, scale, x, y, room, right) {
  g.fillStyle = "#57606a"; g.font = kit.SMALL; g.textAlign = right ? "right" : "left";
  var one = key + "  " + scale;
  if (!KEY_EXTRA && g.measureText(one).width <= room) { g.fillText(one, x, y); return; }
  g.fillText(key, x, y); g.fillText(scale, x, y + 12);
  g.textAlign = "left";
}
function arrow(g, x0, y0, x1, y1, text) {
  g.strokeStyle = "#57606a"; g.fillStyle = "#57606a"; g.lineWidth = 1.25;
  g.beginPath(); g.moveTo(x0, y0); g.lineTo(x1, y1); g.stroke();
  var a = Math.atan2(y1 - y0, x1 - x0);
  g.beginPath(); g.moveTo(x1, y1); g.lineTo(x1 - 7 * Math.cos(a - 0.4), y1 - 7 * Math.sin(a - 0.4)); g.lineTo(x1 - 7 * Math.cos(a + 0.4), y1 - 7 * Math.sin(a + 0.4)); g.fill();
  g.fillStyle = "#1b1f24"; g.font = kit.SMALL;   // the label right of the arrow, else left of it where the right has no room
  var right = x1 + 6 + g.measureText(text).width <= g.canvas.clientWidth - 4;
  g.textAlign = right ? "left" : "right"; g.fillText(text, right ? x1 + 6 : x1 - 6, (y0 + y1) / 2);
  g.textAlign = "left";
}
function deviceVec(name) {   // the selected device's row of a (B, device, ...) record at the sample
  var r = cap.record(name), a = cap.slice(name, state.sample), per = a.length / r.shape[1], d = state.dev;
  return a.subarray(d * per, (d + 1) * per);
}
var ROW_PITCH = 12, ROW_H = 11;   // the encoder FiLM's γ, β rows: one per layer
var KEY_EXTRA = 0;                // px each key under a row takes beyond one line (set by drawMLP)
function drawEncOutput(g, x0, w, y, h, hid) {   // film_enc: fc2 -> (layers, 2, F): gamma and beta per layer
  var n = N.film_enc, i = state.sample, d = state.dev;
  var gam = cap.slice(n.gamma, i), bet = cap.slice(n.beta, i), per = NL * F;
  var e = KEY_EXTRA;
  arrow(g, x0 + w / 2, y + 2 * h + 52 + 2 * e, x0 + w / 2, y + 2 * h + 70 + 2 * e, "fc2 " + hid.length + " → " + (NL * 2 * F) + ", view (" + NL + ", 2, " + F + "), 0.5·tanh");
  var gy = y + 2 * h + 74 + 2 * e, gd = gam.subarray(d * per, (d + 1) * per), bd = bet.subarray(d * per, (d + 1) * per);
  var m = Math.max(kit.absmax(gd), kit.absmax(bd));
  var half = (w - 10) / 2;
  g.fillStyle = "#57606a"; g.font = kit.SMALL; g.textAlign = "right";
  for (var l = 0; l < NL; l++) g.fillText("layer " + l, x0 - 4, gy + l * ROW_PITCH + ROW_H / 2);   // rows one label high apart
  for (l = 0; l < NL; l++) {
    cellRow(g, x0, gy + l * ROW_PITCH, half, ROW_H, gd.subarray(l * F, (l + 1) * F), "γ layer " + l, l === NL - 1 ? "γ: " + NL + " layers × " + F : "", m, { room: half + 6 });
    cellRow(g, x0 + half + 10, gy + l * ROW_PITCH, half, ROW_H, bd.subarray(l * F, (l + 1) * F), "β layer " + l, l === NL - 1 ? "β: " + NL + " layers × " + F : "", m);
  }
}
function drawDecOutput(g, x0, w, y, h, hid) {   // film_dec: fc2 -> (gamma_dec, beta_dec)
  var n = N.film_dec, i = state.sample, d = state.dev;
  var e = KEY_EXTRA, ry = y + 2 * h + 74 + 2 * e;
  arrow(g, x0 + w / 2, y + 2 * h + 52 + 2 * e, x0 + w / 2, y + 2 * h + 70 + 2 * e, "fc2 " + hid.length + " → 2, 0.5·tanh");
  var gdv = cap.slice(n.gamma, i)[d], bdv = cap.slice(n.beta, i)[d], key = "γ_dec = " + fmt(gdv, 4) + ", β_dec = " + fmt(bdv, 4);
  cellRow(g, x0 + w / 2 - 60, ry, 120, h, new Float32Array([gdv, bdv]), "(γ_dec, β_dec)", e ? "" : key, 0.5);
  if (e) rowKey(g, key, "(max |v| " + fmt(0.5, 3) + ")", x0, ry + h + 9, w);   // a phone: from the column's left edge, two lines
}
function drawGenerator(g, gen, title, y, x0, w, h) {   // one FiLM MLP: input (condition | device embedding), hidden, output
  var n = N[gen];
  g.fillStyle = "#1b1f24"; g.font = kit.BOLD; g.textAlign = "left";
  g.fillText(title, 8, y + 8);
  g.font = kit.SMALL; g.fillStyle = "#57606a"; g.fillText(kit.devName(devs[state.dev]), 8, y + 22);
  var inp = deviceVec(n.input), nc = inp.length - cap.record(n.device_embed).shape[1];
  var wc = w * nc / inp.length;
  cellRow(g, x0, y, wc - 4, h, inp.subarray(0, nc), n.input + " cond", "condition (" + nc + ")", 0, { room: wc - 4 });
  cellRow(g, x0 + wc, y, w - wc, h, inp.subarray(nc), n.input + " embed", "device embedding (" + (inp.length - nc) + ")", 0, { right: KEY_EXTRA > 0 });
  var e = KEY_EXTRA;
  arrow(g, x0 + w / 2, y + h + 14 + e, x0 + w / 2, y + h + 34 + e, "fc1 " + inp.length + " → " + cap.record(n.hidden).shape[2] + " + ReLU");
  var hid = deviceVec(n.hidden);
  cellRow(g, x0 + w * 0.2, y + h + 38 + e, w * 0.6, h, hid, n.hidden, n.hidden + " (" + hid.length + ")");
  if (gen === "film_enc") drawEncOutput(g, x0, w, y, h, hid); else drawDecOutput(g, x0, w, y, h, hid);
}
function drawMLP() {
  mlp.cells = [];
  var c = kit.ctx2d(mlp.canvas), g = c.g, W = c.W;
  g.fillStyle = "#fff"; g.fillRect(0, 0, W, c.H);
  var x0 = 110, w = W - x0 - 16, h = 16;
  KEY_EXTRA = W < 600 ? 12 : 0;   // a phone: every key on two lines, the rows below moved down a line (a taller canvas)
  drawGenerator(g, "film_enc", "encoder FiLM", 14, x0, w, h);
  drawGenerator(g, "film_dec", "output FiLM", 186 + 3 * KEY_EXTRA, x0, w, h);
}
function onMLPHover(e) {
  var r = mlp.canvas.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
  for (var k = 0; k < mlp.cells.length; k++) {
    var cl = mlp.cells[k];
    if (x >= cl.x && x < cl.x + cl.w && y >= cl.y && y < cl.y + cl.h) { tooltip.show(cl.label + " = " + fmt(cl.v, 6), e.clientX, e.clientY, function () { onMLPHover(e); }); return; }
  }
  tooltip.hide();
}
function buildMLP() {
  mlp.canvas = document.getElementById("film-mlp");
  kit.saveView(document.getElementById("view-mlp"), mlp.canvas, "film-mlp.png");
  mlp.canvas.addEventListener("mousemove", onMLPHover);
  mlp.canvas.addEventListener("mouseleave", function () { tooltip.hide(); });
}

/* ---------------- 3: gamma / beta heatmaps (2D canvas) ---------------- */
function paramDefs() {   // the device embeddings of both generators, then gamma and beta of every layer
  var defs = [];
  ["film_enc", "film_dec"].forEach(function (p) {
    defs.push({ kind: "embed", name: N[p].device_embed, label: (p === "film_enc" ? "encoder" : "output") + " FiLM device embedding" });
  });
  for (var l = 0; l < NL; l++) {
    defs.push({ kind: "gb", which: "gamma", layer: l, label: "γ, layer " + l });
    defs.push({ kind: "gb", which: "beta", layer: l, label: "β, layer " + l });
  }
  return defs;
}
function pData(def) {   // an embedding as stored, or one layer's gamma/beta: a row per device + the device mean
  var i = state.sample;
  if (def.kind === "embed") { var r = cap.record(def.name); return { data: cap.get(def.name), rows: r.shape[0], cols: r.shape[1] }; }
  var a = cap.slice(N.film_enc[def.which], i), mean = cap.slice(N.film_enc[def.which + "_mean"], i), out = new Float32Array((D + 1) * F);
  for (var dd = 0; dd < D; dd++) out.set(a.subarray((dd * NL + def.layer) * F, (dd * NL + def.layer + 1) * F), dd * F);
  out.set(mean.subarray(def.layer * F, (def.layer + 1) * F), D * F);
  return { data: out, rows: D + 1, cols: F };
}
function pLayout() {
  var W = params.stack.clientWidth, LM = 118, half = (W - LM - 30) / 2, y = 20, boxes = [];
  boxes.push({ x: LM, y: y, width: half, height: 60 }); boxes.push({ x: LM + half + 24, y: y, width: half, height: 60 });
  y += 60 + 46;
  for (var l2 = 0; l2 < NL; l2++) {
    boxes.push({ x: LM, y: y, width: half, height: 92 }); boxes.push({ x: LM + half + 24, y: y, width: half, height: 92 });
    y += 92 + 44;
  }
  params.stack.style.height = (y + 4) + "px";
  return boxes;
}
function pScale() {   // the colour scales: largest |γ|, |β| and |embedding| of the sample
  var sc = { gb: 0, em: 0 };
  params.defs.forEach(function (def) { var m = kit.absmax(pData(def).data); if (def.kind === "gb") sc.gb = Math.max(sc.gb, m); else sc.em = Math.max(sc.em, m); });
  return sc;
}
function pLegends(sc) {
  setLegends(document.getElementById("film-legends"), [["burd", -sc.gb, sc.gb, "γ and β (tanh-bounded to ±0.5)", 3],
    ["burd", -sc.em, sc.em, "device embeddings (value)", 3]]);
}
function pUpload(sc) {
  var hms = params.hms;
  params.defs.forEach(function (def, k) {
    var pd = pData(def), v = def.kind === "gb" ? sc.gb : sc.em;
    if (!hms[k]) hms[k] = heatmap2d(params.canvas, { data: pd.data, rows: pd.rows, cols: pd.cols, vmin: -v, vmax: v, cmap: "burd" });
    else hms[k].update(pd.data, -v, v);
    hms[k].def = def;
  });
}
function drawParams() {   // legends now; the heatmaps when their view is on screen (core.onScreen)
  var sc = pScale();
  pLegends(sc);
  later.params(function () { pUpload(sc); pDraw(); });
}
// text cut with "…" to fit `room` px (a phone's narrow grids), in the context's current font
function fitText(g, text, room) {
  if (g.measureText(text).width <= room) return text;
  while (text.length > 1 && g.measureText(text + "…").width > room) text = text.slice(0, -1);
  return text + "…";
}
function drawParamLabels(g, hm, k) {   // the title, and the record beside it where both fit the grid's width
  var b = params.boxes[k], def = hm.def;
  g.fillStyle = "#1b1f24"; g.font = kit.BOLD; g.textAlign = "left";
  var title = fitText(g, def.label, b.width), room = b.width - g.measureText(title).width - 8;
  g.fillText(title, b.x, b.y - 9);
  g.font = kit.SMALL; g.fillStyle = "#57606a"; g.textAlign = "right";
  var rec = N.film_enc[def.which] + "[:, :, " + def.layer + ", :]";
  if (def.kind !== "embed" && g.measureText(rec).width <= room) g.fillText(rec, b.x + b.width, b.y - 9);
  g.strokeStyle = "#8c959f"; g.lineWidth = 1; g.strokeRect(b.x - 0.5, b.y - 0.5, b.width + 1, b.height + 1);
  if (k % 2 === 0) {
    g.textAlign = "right"; g.font = kit.SMALL;
    var rh = b.height / hm.rows;
    for (var r = 0; r < hm.rows; r++) {
      var lbl = r < D ? kit.devName(devs[r]) : "mean";
      g.fillStyle = r < D ? "#1b1f24" : palette[3]; g.fillText(lbl, b.x - 6, b.y + (r + 0.5) * rh);
    }
  }
  if (def.kind === "gb") {
    var yl = b.y + b.height * D / (D + 1);
    g.strokeStyle = "#1b1f24"; g.lineWidth = 2; g.beginPath(); g.moveTo(b.x, yl); g.lineTo(b.x + b.width, yl); g.stroke();
    g.fillStyle = "#57606a"; g.textAlign = "center";
    [0, F / 2, F - 1].forEach(function (f) { g.fillText(String(f), b.x + ((f + 0.5) / F) * b.width, b.y + b.height + 9); });
    g.fillText("feature", b.x + b.width / 2, b.y + b.height + 22);
  } else {
    g.fillStyle = "#57606a"; g.textAlign = "center";
    g.fillText(fitText(g, def.name + " (" + hm.rows + " × " + hm.cols + ")", b.width), b.x + b.width / 2, b.y + b.height + 10);
  }
}
function pDraw() {
  var pCanvas = params.canvas;
  params.boxes = pLayout();
  pCanvas.style.width = params.stack.clientWidth + "px"; pCanvas.style.height = params.stack.clientHeight + "px";
  fitCanvas(pCanvas); clear2d(pCanvas);
  params.hms.forEach(function (hm, k) { hm.draw(params.boxes[k]); });
  var g = kit.ctx2d(params.overlay).g;
  params.hms.forEach(function (hm, k) { drawParamLabels(g, hm, k); });
}
function paramLabel(hm, r, col, v) {
  var def = hm.def;
  if (def.kind === "embed") return def.name + "\n" + kit.devName(devs[r]) + ", dim " + col + ": " + fmt(v, 6);
  return (def.which === "gamma" ? "γ" : "β") + " layer " + def.layer + ", " + (r < D ? kit.devName(devs[r]) : "device mean") + ", feature " + col + "\n" + fmt(v, 6);
}
function buildParams() {
  params.stack = document.getElementById("film-stack");
  params.canvas = document.getElementById("film-params"); params.overlay = document.getElementById("film-params-labels");
  kit.saveView(document.getElementById("view-params"), function () { return kit.layered(params.canvas, params.overlay); }, "film-gamma-beta.png");
  params.defs = paramDefs();
}
function initParams() {
  drawParams();
  hoverGrid(params.canvas, params.hms, { ariaLabel: "gamma and beta heatmaps", keyboardIndex: 2, label: paramLabel });
}

/* ---------------- 4: live FiLM ---------------- */
function buildSliders() {
  var sl = document.getElementById("film-sliders"), fmt2 = function (v) { return (v >= 0 ? "+" : "") + v.toFixed(2); };
  var times = function (v) { return "×" + v.toFixed(2); };
  var s = {
    gs: kit.range(sl, "ctl-gscale", "γ scale", 0, 3, 0.05, 1, times, function (v) { state.p.gs = v; live(); }),
    go: kit.range(sl, "ctl-goffset", "γ offset", -1, 1, 0.01, 0, fmt2, function (v) { state.p.go = v; live(); }),
    bs: kit.range(sl, "ctl-bscale", "β scale", 0, 3, 0.05, 1, times, function (v) { state.p.bs = v; live(); }),
    bo: kit.range(sl, "ctl-boffset", "β offset", -1, 1, 0.01, 0, fmt2, function (v) { state.p.bo = v; live(); }),
  };
  var rb = controls.button(sl, "Reset to captured", function () { s.gs.setValue(1); s.go.setValue(0); s.bs.setValue(1); s.bo.setValue(0); });
  rb.id = "ctl-film-reset";
  return s;
}
function buildLive() {
  lv.stack = document.getElementById("film-live-stack");
  lv.canvas = document.getElementById("film-live"); lv.overlay = document.getElementById("film-live-labels");
  lv.plotCanvas = document.getElementById("film-live-plot");
  kit.saveView(document.getElementById("view-live"), function () { return kit.layered(lv.canvas, lv.overlay); }, "film-live.png");
  lv.sliders = buildSliders();
}
function liveData() {   // the layer's captured FFN output (time-major and transposed), FiLM output, mean gamma/beta
  var i = state.sample, l2 = state.layer;
  live0.x = cap.slice(N.ffn_out[l2], i);                 // (L, F) time-major
  live0.film = cap.slice(N.film[l2], i);
  live0.g = cap.slice(N.film_enc.gamma_mean, i).subarray(l2 * F, (l2 + 1) * F);
  live0.b = cap.slice(N.film_enc.beta_mean, i).subarray(l2 * F, (l2 + 1) * F);
  var xT = new Float32Array(F * L);
  for (var t = 0; t < L; t++) for (var f = 0; f < F; f++) xT[f * L + t] = live0.x[t * F + f];
  live0.xT = xT;
  live0.range = kit.absmax(xT);
}
function modulated() {
  var out = new Float32Array(F * L), x = live0.x, p = state.p;
  for (var t = 0; t < L; t++) for (var f = 0; f < F; f++) out[f * L + t] = filmValue(x[t * F + f], live0.g[f], live0.b[f], p);
  return out;
}
function live() {   // readout and check now, the heatmaps and the plot when on screen (core.onScreen)
  var mod = modulated(), v = Math.max(live0.range, kit.absmax(mod));
  state.range = v;
  later.live(function () { liveUpload(mod, v); liveDraw(); livePlot(mod); });
  liveReadout(); liveCheck(mod); if (wi) wi.update();
}
function liveUpload(mod, v) {
  var hms = lv.hms;
  if (!hms[0]) {
    hms[0] = heatmap2d(lv.canvas, { data: live0.xT, rows: F, cols: L, vmin: -v, vmax: v, cmap: "burd" });
    hms[1] = heatmap2d(lv.canvas, { data: mod, rows: F, cols: L, vmin: -v, vmax: v, cmap: "burd" });
  } else { hms[0].update(live0.xT, -v, v); hms[1].update(mod, -v, v); }
  hms[0].title = N.ffn_out[state.layer]; hms[1].title = "(1 + γ′)·ffn_out + β′";
}
function drawLiveLabels(g, hm, k) {
  var b = lv.boxes[k];
  g.fillStyle = "#1b1f24"; g.font = kit.BOLD; g.textAlign = "left"; g.fillText(hm.title, b.x, b.y - 9);
  g.strokeStyle = "#8c959f"; g.lineWidth = 1; g.strokeRect(b.x - 0.5, b.y - 0.5, b.width + 1, b.height + 1);
  var cb = hm.cellBox(state.feature, state.t);
  g.strokeStyle = "#000"; g.lineWidth = 1; g.strokeRect(cb.x - 2, cb.y - 2, cb.width + 4, cb.height + 4);
  g.fillStyle = "#57606a"; g.font = kit.SMALL; g.textAlign = "center";
  stepTicks(kit.clock(extra, state.sample), 0, L - 1, Math.floor(b.width / 70)).forEach(function (tk) {
    g.fillText(tk.label, b.x + ((tk.step + 0.5) / L) * b.width, b.y + b.height + 9);
  });
  g.fillText("time (UTC)", b.x + b.width / 2, b.y + b.height + 22);
  if (k === 0) { g.textAlign = "right"; g.fillText("feature 0", b.x - 4, b.y + 5); g.fillText(String(F - 1), b.x - 4, b.y + b.height - 5); }
  if (k === 1) { g.textAlign = "left"; g.fillText("0", b.x + b.width + 4, b.y + 5); g.fillText(String(F - 1), b.x + b.width + 4, b.y + b.height - 5); }
}
function liveDraw() {
  var W = lv.stack.clientWidth, LM = 64, half = (W - LM - 40) / 2;
  lv.boxes = [{ x: LM, y: 20, width: half, height: LIVE_PX }, { x: LM + half + 20, y: 20, width: half, height: LIVE_PX }];
  lv.canvas.style.width = W + "px"; lv.canvas.style.height = lv.stack.clientHeight + "px";
  fitCanvas(lv.canvas); clear2d(lv.canvas);
  lv.hms.forEach(function (hm, k) { hm.draw(lv.boxes[k]); });
  // the labels change with the layout, the titles and the selected cell, not with a slider: a redrawn 2D canvas
  // is re-uploaded whole, which cost a dragged γ/β slider a sixth of its frames
  var key = [W, lv.stack.clientHeight, window.devicePixelRatio, state.feature, state.t, state.sample].concat(lv.hms.map(function (hm) { return hm.title; })).join("|");
  if (key === lv.labelsKey) return;
  lv.labelsKey = key;
  var g = kit.ctx2d(lv.overlay).g;
  lv.hms.forEach(function (hm, k) { drawLiveLabels(g, hm, k); });
}
function livePlot(mod) {
  var f = state.feature, xs = new Float32Array(L), ms = new Float32Array(L), cs = new Float32Array(L);
  for (var t = 0; t < L; t++) { xs[t] = live0.x[t * F + f]; ms[t] = mod[f * L + t]; cs[t] = live0.film[t * F + f]; }
  var opts = { title: "feature " + f + " of layer " + state.layer + " over time", x: kit.timeAxis(extra, state.sample, L),
    lanes: [{ y: { label: "value" }, series: [
      { name: "ffn_out", y: xs, kind: "line", color: "#8c959f", width: 1.25 },
      { name: "modulated (live)", y: ms, kind: "line", color: palette[3], width: 1.75 },
      { name: "captured " + N.film[state.layer], y: cs, kind: "line", color: "#000", width: 1, dash: [3, 3] }] }] };
  if (!lv.plot) { lv.plot = plot2d.create(lv.plotCanvas, opts); plot2d.hover(lv.plot, function (x) { state.t = Math.round(x); liveDraw(); liveReadout(); }); }
  else lv.plot.opts = opts;
  lv.plot.setCursor(state.t);
}
function liveReadout() {
  var f = state.feature, t = state.t, x = live0.x[t * F + f], p = state.p;
  var g = live0.g[f] * p.gs + p.go, b = live0.b[f] * p.bs + p.bo, y = filmValue(x, live0.g[f], live0.b[f], p), cpt = live0.film[t * F + f];
  kit.setReadout(document.getElementById("film-readout"), [
    ["layer, feature, time", f, "L" + state.layer + ", f " + f + ", " + stepTime(kit.clock(extra, state.sample), t), "cell"],
    ["ffn_out", x, undefined, "ffn"],
    ["γ′ (mean over devices)", g, undefined, "gamma"],
    ["β′", b, undefined, "beta"],
    ["recomputed", y, undefined, "recomputed"],
    ["captured film", cpt, undefined, "captured"],
    ["equal?", y === cpt ? 1 : 0, y === cpt ? "yes, exactly" : "no (sliders moved)", "equal"],
  ]);
}
function liveCheck(mod) {
  var n = 0, NN = F * L;
  for (var t = 0; t < L; t++) for (var f = 0; f < F; f++) if (mod[f * L + t] === live0.film[t * F + f]) n++;
  var el = document.getElementById("film-live-check");
  el.innerHTML = "";
  var b = document.createElement("span");
  b.className = "kit-badge " + (n === NN ? "ok" : "off"); b.id = "film-match"; b.dataset.matches = String(n); b.dataset.total = String(NN);
  b.textContent = n + " / " + NN + " values equal the captured " + N.film[state.layer];
  el.appendChild(b);
  el.appendChild(document.createTextNode(n === NN ? " — bit for bit, at the captured γ and β." : " — the sliders move γ′, β′ away from the captured values."));
}
function onLiveCell(hm, r, col) { state.feature = r; state.t = col; liveDraw(); livePlot(modulated()); liveReadout(); }
function bindLiveHover() {
  hoverGrid(lv.canvas, lv.hms, {
    ariaLabel: "FFN output and modulated features",
    label: function (hm, r, col, v) { return hm.title + "\nfeature " + r + ", " + stepTime(kit.clock(extra, state.sample), col) + ": " + fmt(v, 6); },
    onCell: onLiveCell,
  });
}

/* ---------------- 5: ablation ---------------- */
var BELOW0 = "below 0 W: raw output, a closed gate's output-FiLM offset β (post-processing clamps it to 0)";
function ablationLane(name, d, on, off, tp) {   // one device: truth, FiLM off, FiLM on, in watts, with both MAEs
  var w = kit.watts(extra, name), sub = function (a) { return kit.mapArray(a.subarray(d * L, (d + 1) * L), w.f); };
  var a = sub(on), b = sub(off), t = sub(tp), ea = 0, eb = 0;
  for (var k = 0; k < L; k++) { ea += Math.abs(a[k] - t[k]); eb += Math.abs(b[k] - t[k]); }
  return { title: kit.devName(name) + " · MAE with FiLM " + fmt(ea / L, 3) + " W, without " + fmt(eb / L, 3) + " W",
           y: { label: kit.devName(name), unit: w.unit }, flat: "off in this window", below0: BELOW0,
           series: [{ name: "ground truth", y: t, kind: "area", color: palette[2], width: 1 },
                    { name: "FiLM off", y: b, kind: "line", color: palette[0], width: 1.5, dash: [4, 3] },
                    { name: "FiLM on", y: a, kind: "line", color: palette[3], width: 1.5 }] };
}
function drawAblation() {
  var i = state.sample, on = cap.slice(N.output, i), off = cap.slice(N.output_no_film, i), tp = cap.slice(N.target, i);
  var lanes = devs.map(function (name, d) { return ablationLane(name, d, on, off, tp); });
  var opts = { title: "final power per device · " + kit.sampleLabel(extra, i), x: kit.timeAxis(extra, i, L), lanes: lanes };
  if (!abl.plot) { abl.plot = plot2d.create(abl.canvas, opts); plot2d.hover(abl.plot); } else abl.plot.opts = opts;
  abl.plot.draw();
}

/* ---------------- set-up ---------------- */
var later = {};   // views drawn when on screen (core.onScreen), one per view below the condition features
function buildLater() {
  [["mlp", "film-mlp"], ["params", "film-stack"], ["live", "film-live-stack"], ["ablation", "film-ablation"]].forEach(function (v) {
    later[v[0]] = onScreen(document.getElementById(v[1]));
  });
}
function drawAll() { drawCond(); later.mlp(drawMLP); drawParams(); liveData(); live(); later.ablation(drawAblation); }
function onResizeAll() {
  if (params.hms.length) pDraw();
  liveDraw(); drawCond(); drawMLP();
  if (abl.plot) abl.plot.draw();
  if (lv.plot) lv.plot.draw();
}
function buildControls() {
  var controlsEl = document.getElementById("nb-controls");
  kit.sampleSelect(controlsEl, extra, function (v) { state.sample = v; drawAll(); });
  kit.deviceSelect(controlsEl, devs, function (v) { state.dev = v; later.mlp(drawMLP); });
  var layerOpts = []; for (var l = 0; l < NL; l++) layerOpts.push({ value: String(l), label: "layer " + l });
  layerSel = controls.select(controlsEl, "Layer", layerOpts, "0", function (v) { state.layer = Number(v); liveData(); live(); });
  layerSel.id = "ctl-layer";
}
function buildViews() {
  kit.saveView(document.getElementById("view-cond"), document.getElementById("film-spectrum"), "film-spectrum.png");
  buildMLP();
  buildParams();
  buildLive();
  abl.canvas = document.getElementById("film-ablation");
  kit.saveView(document.getElementById("view-ablation"), abl.canvas, "film-on-off.png");
}
function finish() {
  var s = lv.sliders;
  wi = filmWhatIf({ after: document.getElementById("view-live"), cap: cap, state: state, sampleLabel: function (i) { return kit.sampleLabel(extra, i); } });
  testHook({ whatif: wi, state: state, cap: cap, extra: extra, live: live0, setCell: function (f, t) { state.feature = f; state.t = t; live(); },
             paramHeatmaps: function () { flushDeferred(); return params.hms; }, mlpCells: function () { flushDeferred(); return mlp.cells; },
             sliders: s, liveHeatmaps: lv.hms, liveBoxes: function () { flushDeferred(); return lv.boxes; }, filmValue: filmValue });
  stateInUrl([["sample", "#ctl-sample"], ["device", "#ctl-device"], ["layer", layerSel],
              ["gscale", s.gs], ["goffset", s.go], ["bscale", s.bs], ["boffset", s.bo], ["filmon", "#whatif-film-on"]]);
  ready();
}

function run(pg) {
  var L0 = kit.load();
  N = pg.data.names; cap = L0.cap; extra = L0.extra; devs = extra.devices; D = devs.length;
  var gRec = cap.record(N.film_enc.gamma);
  NL = gRec.shape[2]; F = gRec.shape[3]; L = cap.record(N.ffn_out[0]).shape[1];
  state = { sample: 0, dev: 0, layer: 0, feature: 0, t: Math.floor(L / 2), p: { gs: 1, go: 0, bs: 1, bo: 0 } };
  aggW = kit.watts(extra, "aggregate");
  // one macrotask per step (core.inTasks)
  inTasks([function () { buildControls(); buildViews(); buildLater(); kit.onResize(params.stack, onResizeAll); }, initParams,
           drawCond, drawMLP, liveData, live,
           bindLiveHover, drawAblation, finish]);
}

registerPage({ slug: "film", start: run });

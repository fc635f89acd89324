/* page_upstream_film.js: CondiNILM's FiLM page (nilmbuild/site/views/upstream_film.py). For the selected window:
 * the output FiLM's (gamma, beta) per device (#ufm-dec) and each device's power head before the output FiLM, after
 * it (before the ReLU) and after the ReLU (#ufm-lanes); the encoder FiLM's mean gamma and beta, layers by features
 * (#ufm-enc, hover values); the condition features (#ufm-cond). Every value is a capture record (page().data.names);
 * sizes come from the records' shapes. */
import { registerPage } from "./register.js";
import { stateInUrl } from "./url_state.js";
import { legend, palette } from "./colormaps.js";
import { blob, context2d, controls, fmt, font, ready, setText } from "./core.js";
import { decode } from "./decode.js";
import { onWidth } from "./on_width.js";
import { escapeHTML, patchHTML } from "./dom_patch.js";
import { fitCanvas, hoverGrid } from "./grid.js";
import { clear2d, heatmap2d } from "./heatmap2d.js";
import { plot2d } from "./plot2d.js";
import { timeAxis } from "./time_axis.js";
import { upstreamWhatIf } from "./whatif_upstream.js";

var DASH = [null, [5, 3], null];                      // before FiLM solid, after FiLM dashed, after ReLU solid
var STEP_COLOURS = [palette[0], palette[3], palette[2]];   // one colour per step (Okabe-Ito), the same in every lane
var P, N, cap, S, ui = {}, enc = [];

function row(name, d) {   // (D, L) record -> device d's row for the selected sample
  var r = cap.record(name), L = r.shape[2], a = cap.slice(name, S.sample);
  return a.subarray(d * L, (d + 1) * L);
}

/* ---------- output FiLM ---------- */
function drawDecTable() {
  var g = cap.slice(N.dec_gamma, S.sample), b = cap.slice(N.dec_beta, S.sample);
  var html = "<thead><tr><th scope=\"col\">device</th><th scope=\"col\">γ</th><th scope=\"col\">β</th>" +
    "<th scope=\"col\">power ↦ (1 + γ) power + β</th></tr></thead><tbody>";
  P.devices.forEach(function (d, k) {
    var note = P.sparse.indexOf(d) >= 0 ? " (its output comes from the sparse CNN)" : "";
    html += "<tr><th scope=\"row\">" + escapeHTML(d.replace(/_/g, " ")) + "</th><td>" + fmt(g[k], 5) + "</td><td>" + fmt(b[k], 5) +
      "</td><td>× " + fmt(1 + g[k], 5) + (b[k] < 0 ? " − " : " + ") + fmt(Math.abs(b[k]), 5) + escapeHTML(note) + "</td></tr>";
  });
  patchHTML(document.getElementById("ufm-dec"), html + "</tbody>");
}
function drawLanes() {
  var lanes = [], c = document.getElementById("ufm-lanes"), steps = cap.record(N.power[0].record).shape[2];
  var xs = Float32Array.from({ length: steps }, function (_, i) { return i; });   // step indices: the axis reads them in UTC
  P.devices.forEach(function (d, k) {
    lanes.push({ title: d.replace(/_/g, " "), y: { label: "power", unit: "scaled", zero: true },
      series: N.power.map(function (p, j) {
        return { name: p.name, x: xs, y: Float32Array.from(row(p.record, k)), kind: "line", dash: DASH[j], width: j === 2 ? 2.2 : 1.4,
                 color: STEP_COLOURS[j % STEP_COLOURS.length] };
      }) });
  });
  c.style.height = (lanes.length * 130 + 70) + "px";
  var p = plot2d.create(c, { title: "Window " + P.sample_labels[S.sample],
    x: timeAxis(P.sample_labels[S.sample], P.step_minutes * 60, steps), lanes: lanes });
  p.draw();
  return p;
}

/* ---------- encoder FiLM ---------- */
function encLayout(c, layers) {
  var W = c.clientWidth, padL = 64, h = Math.max(30, Math.min(90, layers * 22));
  return [{ x: padL, y: 22, width: W - padL - 10, height: h }, { x: padL, y: 22 + h + 52, width: W - padL - 10, height: h }];
}
function encLabels(g, boxes, layers, d) {
  ["γ (mean over devices)", "β (mean over devices)"].forEach(function (t, k) {
    var b = boxes[k];
    g.fillStyle = "#1b1f24"; g.font = font(12, 600); g.textAlign = "left"; g.textBaseline = "bottom";
    g.fillText(t, b.x, b.y - 4);
    g.font = font(11); g.textAlign = "right"; g.textBaseline = "middle";
    for (var l = 0; l < layers; l++) g.fillText("layer " + l, b.x - 4, b.y + ((l + 0.5) / layers) * b.height);
    g.textAlign = "center"; g.textBaseline = "top";
    g.fillText("feature (0 … " + (d - 1) + " of the " + d + "-d stream)", b.x + b.width / 2, b.y + b.height + 3);
  });
}
function drawEnc() {
  var c = document.getElementById("ufm-enc"), sh = cap.record(N.gamma_mean).shape, layers = sh[1], d = sh[2];
  var vals = [cap.slice(N.gamma_mean, S.sample), cap.slice(N.beta_mean, S.sample)], m = 1e-9;
  vals.forEach(function (v) { for (var i = 0; i < v.length; i++) m = Math.max(m, Math.abs(v[i])); });
  var boxes = encLayout(c, layers);
  c.style.height = (boxes[1].y + boxes[1].height + 24) + "px";
  fitCanvas(c); clear2d(c);
  var g = context2d(c);
  enc = vals.map(function (v, k) {
    var hm = heatmap2d(c, { data: Float32Array.from(v), rows: layers, cols: d, vmin: -m, vmax: m, cmap: "burd" });
    hm.draw(boxes[k]); hm.label = k ? "β" : "γ";
    return hm;
  });
  g.setTransform(c.width / c.clientWidth, 0, 0, c.height / c.clientHeight, 0, 0);
  encLabels(g, boxes, layers, d);
  legend(document.getElementById("nb-legend"), "burd", -m, m, "encoder FiLM γ, β (this window)");
}
function hoverEnc() {
  var c = document.getElementById("ufm-enc");
  var proxy = [0, 1].map(function (k) {
    return { get rows() { return enc[k].rows; }, get cols() { return enc[k].cols; }, get box() { return enc[k].box; },
             value: function (r, col) { return enc[k].value(r, col); }, cellAt: function (x, y) { return enc[k].cellAt(x, y); },
             cellBox: function (r, col) { return enc[k].cellBox(r, col); }, k: k };
  });
  hoverGrid(c, proxy, {
    label: function (hm, r, col, v) { return enc[hm.k].label + ", layer " + r + ", feature " + col + ": " + fmt(v, 6); },
    onCell: function (hm, r, col) {
      setText(document.getElementById("ufm-enc-readout"), "Layer " + r + ", feature " + col + ": FFN output × " +
        fmt(1 + enc[0].value(r, col), 5) + " + " + fmt(enc[1].value(r, col), 5) + " (the layer's FiLM for this window).");
    },
    ariaLabel: "encoder FiLM gamma and beta, layers by features",
  });
}

/* ---------- condition features ---------- */
function drawCond() {
  var v = cap.slice(N.cond, S.sample), html = "<thead><tr><th scope=\"col\">condition feature</th><th scope=\"col\">value (scaled units)</th></tr></thead><tbody>";
  P.cond_labels.forEach(function (t, i) { html += "<tr><th scope=\"row\">" + escapeHTML(t) + "</th><td>" + fmt(v[i], 5) + "</td></tr>"; });
  patchHTML(document.getElementById("ufm-cond"), html + "</tbody>");
}

function drawAll() { drawDecTable(); S.lanes = drawLanes(); drawEnc(); drawCond(); }
function start(page) {
  P = page.data; N = P.names;
  cap = decode(blob("capture"));
  S = { sample: 0 };
  ui.sample = controls.select(document.getElementById("nb-controls"), "Window",
    P.samples.map(function (s, i) { return { value: i, label: "sample " + s + " · " + P.sample_labels[i] }; }), 0,
    function (v) { S.sample = Number(v); drawAll(); ui.whatIf.update(); });
  drawAll();
  hoverEnc();
  ui.whatIf = upstreamWhatIf({ box: document.getElementById("ufm-whatif"), data: P.whatif, key: "filmOn", label: "FiLM off",
                               sample: function () { return S.sample; } });
  stateInUrl([["sample", ui.sample]]);
  onWidth(document.getElementById("ufm-enc"), drawAll);
  ready();
  return { state: S, row: row, enc: function () { return enc; }, whatIf: ui.whatIf };
}

registerPage({ slug: "film", start: start });

/* page_upstream_forward.js: the Forward page of an upstream model (nilmbuild/site/views/upstream_forward.py).
 * #uf-strip: one thumbnail per stage of the model's own forward pass (page().data.stages, in the order the model
 * runs them), the selected window's tensor coloured on the stage's own largest |value|; click one (or pick it from
 * the list) to see it large in #uf-zoom with labelled axes, its shape, axes and doc from the capture records, and
 * hover values. A record's grid (rows x cols, transposed so that time runs left to right) follows its layout from
 * Python; sizes come from the records' shapes, the stats token's index from page().data.stats_index. */
import { registerPage } from "./register.js";
import { stateInUrl } from "./url_state.js";
import { legend } from "./colormaps.js";
import { blob, context2d, controls, element, fmt, font, ready } from "./core.js";
import { decode } from "./decode.js";
import { onWidth } from "./on_width.js";
import { fitCanvas, hoverGrid } from "./grid.js";
import { clear2d, heatmap2d } from "./heatmap2d.js";
import { stepTicks, stepTime, windowClock } from "./time_axis.js";

var CMAP = "burd", THUMB_W = 150, THUMB_H = 64, THUMB_GAP = 30, LABEL_H = 34;
var P, cap, S, strip, zoom, ui = {}, thumbs = [], zooms = [], boxes = [], zoomCursor = null;

/* ---------- a stage's values: one (rows x cols) grid per record, for the selected sample ---------- */
function grid(name, lay, sample) {
  var shape = cap.record(name).shape.slice(1), v = cap.slice(name, sample);
  var sr = shape.length < 2 ? 1 : shape.slice(0, -1).reduce(function (a, b) { return a * b; }, 1);
  var sc = shape.length ? shape[shape.length - 1] : 1;   // the stored (rows x cols) of one sample
  if (!lay.transpose) return { data: Float32Array.from(v), rows: sr, cols: sc };
  var out = new Float32Array(v.length);   // stored (time, feature) -> drawn (feature, time)
  for (var t = 0; t < sr; t++) for (var f = 0; f < sc; f++) out[f * sr + t] = v[t * sc + f];
  return { data: out, rows: sc, cols: sr };
}
function gridsOf(i) {
  var st = P.stages[i];
  return st.records.map(function (name, k) { return grid(name, st.layout[k], S.sample); });
}
function range(gs) {
  var m = 1e-12;
  gs.forEach(function (g) { for (var j = 0; j < g.data.length; j++) m = Math.max(m, Math.abs(g.data[j])); });
  return m;
}
function shapeText(name) { return cap.record(name).shape.slice(1).join(" × "); }

/* ---------- the strip of stages ---------- */
function stripLayout() {
  var W = strip.clientWidth, per = Math.max(1, Math.floor((W + THUMB_GAP) / (THUMB_W + THUMB_GAP)));
  var w = Math.min(THUMB_W, Math.floor((W - THUMB_GAP * (per - 1)) / per));
  var out = P.stages.map(function (_, i) {
    return { x: (i % per) * (w + THUMB_GAP), y: Math.floor(i / per) * (THUMB_H + LABEL_H + 14) + 4, width: w, height: THUMB_H };
  });
  out.height = Math.ceil(P.stages.length / per) * (THUMB_H + LABEL_H + 14) + 8;
  return out;
}
function drawThumb(g, i, b) {
  var gs = gridsOf(i), m = range(gs), n = gs.length, h = (b.height - 2 * (n - 1)) / n;
  gs.forEach(function (gr, k) {
    var hm = heatmap2d(strip, { data: gr.data, rows: gr.rows, cols: gr.cols, vmin: -m, vmax: m, cmap: CMAP });
    hm.draw({ x: b.x, y: b.y + k * (h + 2), width: b.width, height: h });
  });
  g.strokeStyle = i === S.stage ? "#D55E00" : "#8c959f"; g.lineWidth = i === S.stage ? 2.5 : 1;
  g.strokeRect(b.x, b.y, b.width, b.height);
  g.fillStyle = "#1b1f24"; g.font = font(12, i === S.stage ? 700 : 600); g.textAlign = "left"; g.textBaseline = "top";
  g.fillText(fit(g, P.stages[i].stage + " " + P.stages[i].title, b.width), b.x, b.y + b.height + 3);
  g.font = font(11); g.fillStyle = "#57606a";
  g.fillText(fit(g, P.stages[i].records.map(shapeText).join(" + "), b.width), b.x, b.y + b.height + 18);
}
function fit(g, text, w) {   // text cut with an ellipsis to width w (CSS px)
  if (g.measureText(text).width <= w) return text;
  while (text.length > 1 && g.measureText(text + "…").width > w) text = text.slice(0, -1);
  return text + "…";
}
function drawArrow(g, a, b) {   // from one thumbnail to the next on the same row
  if (Math.abs(a.y - b.y) > 1) return;
  var y = a.y + a.height / 2, x0 = a.x + a.width + 4, x1 = b.x - 4;
  g.strokeStyle = "#57606a"; g.lineWidth = 1.2; g.beginPath(); g.moveTo(x0, y); g.lineTo(x1, y);
  g.lineTo(x1 - 5, y - 4); g.moveTo(x1, y); g.lineTo(x1 - 5, y + 4); g.stroke();
}
function drawStrip() {
  boxes = stripLayout();
  strip.style.height = boxes.height + "px";
  fitCanvas(strip);
  clear2d(strip);
  var g = context2d(strip);
  g.setTransform(strip.width / strip.clientWidth, 0, 0, strip.height / strip.clientHeight, 0, 0);
  P.stages.forEach(function (_, i) {
    drawThumb(g, i, boxes[i]);
    g.setTransform(strip.width / strip.clientWidth, 0, 0, strip.height / strip.clientHeight, 0, 0);
    if (i > 0) drawArrow(g, boxes[i - 1], boxes[i]);
  });
}

/* ---------- the selected stage, large ---------- */
function zoomBoxes(gs) {   // one box per record, a title line above each and its x axis below
  var W = zoom.clientWidth, padL = 44, padR = 12, top = 24, gap = 70, H = 0, out = [];
  gs.forEach(function (gr) {
    var h = Math.max(60, Math.min(320, gr.rows * 8));
    out.push({ x: padL, y: top + H, width: W - padL - padR, height: h });
    H += h + gap;
  });
  out.height = top + H - gap + 40;
  return out;
}
function clock() { return windowClock(P.sample_labels[S.sample], P.step_minutes * 60); }   // the window's steps in UTC
function colTicks(time, n, last, step) {   // [{step, label}]: clock-time ticks over the time steps, else every step-th index
  if (time) return stepTicks(clock(), 0, Math.min(n, P.stats_index) - 1, 6).filter(function (t) { return t.step < last; });
  var out = [];
  for (var c = 0; c < last; c += step) out.push({ step: c, label: String(c) });
  return out;
}
function xTicks(g, b, gr, lay) {   // the column axis: time steps in clock time (the stats token named), else indices
  var time = lay.time_x, n = gr.cols, step = Math.max(1, Math.ceil(n / 8));
  var stats = time && n === P.stats_index + 1, last = stats ? P.stats_index - step / 2 : n;
  g.textAlign = "center"; g.textBaseline = "top"; g.fillStyle = "#1b1f24"; g.font = font(11);
  b.ticks = colTicks(time, n, last, step).map(function (t) { return { step: t.step, label: t.label, x: b.x + ((t.step + 0.5) / n) * b.width }; });
  b.ticks.forEach(function (t) { g.fillText(t.label, t.x, b.y + b.height + 3); });
  if (!stats) return;
  g.fillStyle = "#D55E00"; g.font = font(11, 600);
  g.fillText("stats", b.x + ((n - 0.5) / n) * b.width, b.y + b.height + 3);
}
function axisTitles(g, b, name, lay) {   // above: the record and what its rows are; below: the x axis
  g.fillStyle = "#1b1f24"; g.font = font(12, 600); g.textAlign = "left"; g.textBaseline = "bottom";
  g.fillText(fit(g, name + " · rows: " + lay.y + " (index, top to bottom)", b.width), b.x, b.y - 4);
  var x = lay.time_x ? "time (UTC" + (b.statsCol ? "; last: stats token)" : ")") : lay.x + " (index)";
  g.font = font(12); g.textAlign = "center"; g.textBaseline = "top";
  g.fillText(fit(g, x, b.width), b.x + b.width / 2, b.y + b.height + 18);
  g.textAlign = "right"; g.textBaseline = "middle"; g.font = font(11);
  g.fillText("0", b.x - 4, b.y + b.height / (2 * b.rows));
  if (b.rows > 1) g.fillText(String(b.rows - 1), b.x - 4, b.y + b.height - b.height / (2 * b.rows));
}
function drawZoom() {
  var st = P.stages[S.stage], gs = gridsOf(S.stage), m = range(gs), lb = zoomBoxes(gs);
  zoom.style.height = lb.height + "px";
  fitCanvas(zoom);
  clear2d(zoom);
  var g = context2d(zoom);
  zooms = gs.map(function (gr, k) {
    var hm = heatmap2d(zoom, { data: gr.data, rows: gr.rows, cols: gr.cols, vmin: -m, vmax: m, cmap: CMAP });
    hm.draw(lb[k]);
    hm.record = st.records[k]; hm.layout = st.layout[k];
    lb[k].statsCol = st.layout[k].time_x && gr.cols === P.stats_index + 1;
    lb[k].rows = gr.rows;
    g.setTransform(zoom.width / zoom.clientWidth, 0, 0, zoom.height / zoom.clientHeight, 0, 0);
    xTicks(g, lb[k], gr, st.layout[k]);
    hm.ticks = lb[k].ticks;   // the drawn column ticks (tests read them)
    axisTitles(g, lb[k], st.records[k], st.layout[k]);
    return hm;
  });
  legend(document.getElementById("nb-legend"), CMAP, -m, m, "value (this stage, this window)");
  drawInfo(st);
  return zooms;
}
function isStats(lay, cols, c) { return lay.time_x && cols === P.stats_index + 1 && c === P.stats_index; }
function drawInfo(st) {
  document.getElementById("uf-zoom-title").textContent = "Stage " + st.stage + ": " + st.title + " — " + st.what;
  var dl = document.getElementById("uf-info");
  dl.textContent = "";
  st.records.forEach(function (name) {
    var r = cap.record(name);
    [["record", name], ["shape", r.shape.join(" × ") + " (" + r.axes.join(", ") + "; batch: the page's windows)"],
     ["what", r.doc], ["range over these windows", fmt(r.stats.min, 4) + " … " + fmt(r.stats.max, 4)]].forEach(function (kv) {
      dl.appendChild(element("dt", {}, kv[0])); dl.appendChild(element("dd", {}, kv[1]));
    });
  });
}

/* ---------- building ---------- */
function select(i) { S.stage = i; ui.stage.value = String(i); drawStrip(); drawZoom(); }
function drawAll() { drawStrip(); drawZoom(); }
function onStripClick(e) {
  var r = strip.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
  boxes.forEach(function (b, i) { if (x >= b.x && x < b.x + b.width && y >= b.y && y < b.y + b.height + LABEL_H) select(i); });
}
function hoverZoom() {
  var proxy = [0, 1].map(function (k) {   // hoverGrid reads the current zoom's heatmaps through these
    return { get rows() { return (zooms[k] || zooms[0]).rows; }, get cols() { return (zooms[k] || zooms[0]).cols; },
             get box() { return zooms[k] ? zooms[k].box : null; },
             value: function (r, c) { var z = zooms[k] || zooms[0]; return z.value(Math.min(r, z.rows - 1), Math.min(c, z.cols - 1)); },
             cellAt: function (x, y) { return zooms[k] ? zooms[k].cellAt(x, y) : null; },
             cellBox: function (r, c) { var z = zooms[k] || zooms[0]; return z.cellBox(Math.min(r, z.rows - 1), Math.min(c, z.cols - 1)); },
             k: k };
  });
  zoomCursor = hoverGrid(zoom, proxy, {
    label: function (hm, r, c, v) {
      var z = zooms[hm.k] || zooms[0], lay = z.layout;
      var col = isStats(lay, z.cols, c) ? "stats token" : lay.time_x ? c + " (" + stepTime(clock(), c) + ")" : c;
      return z.record + "\n" + lay.y + " " + r + ", " + lay.x + " " + col + "\nvalue " + fmt(v, 6);
    },
    ariaLabel: "the selected stage's values",
  });
}
function buildControls() {
  var box = document.getElementById("nb-controls");
  ui.sample = controls.select(box, "Window", P.samples.map(function (s, i) { return { value: i, label: "sample " + s + " · " + P.sample_labels[i] }; }), 0,
    function (v) { S.sample = Number(v); drawAll(); });
  ui.stage = controls.select(box, "Stage", P.stages.map(function (st, i) { return { value: i, label: st.stage + " " + st.title }; }), 0,
    function (v) { select(Number(v)); });
}

function start(page) {
  P = page.data;
  cap = decode(blob("capture"));
  S = { sample: 0, stage: 0 };
  strip = document.getElementById("uf-strip"); zoom = document.getElementById("uf-zoom");
  buildControls();
  drawAll();
  strip.addEventListener("click", onStripClick);
  hoverZoom();
  stateInUrl([["sample", ui.sample], ["stage", ui.stage]]);
  onWidth(strip, drawAll);
  ready();
  return { state: S, grids: gridsOf, zooms: function () { return zooms; }, boxes: function () { return boxes; }, select: select };
}

registerPage({ slug: "forward", start: start });

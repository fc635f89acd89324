/* page_upstream_embedding.js: the Embedding page of an upstream model (nilmbuild/site/views/upstream_embedding.py):
 * the selected window's aggregate and normalised power (plot2d), the DilatedBlock output, the time projection and
 * the tokens with the stats token last (heatmap2d, diverging colours, symmetric range per map). */
import { registerPage } from "./register.js";
import { stateInUrl } from "./url_state.js";
import { controls, fmt, ready, setText } from "./core.js";
import { fitCanvas } from "./grid.js";
import { clear2d, heatmap2d } from "./heatmap2d.js";
import { plot2d } from "./plot2d.js";
import { timeAxis } from "./time_axis.js";

// rows of numbers -> {data: Float32Array, rows, cols, m: max |value|}
function grid(rows) {
  var R = rows.length, C = rows[0].length, data = new Float32Array(R * C), m = 1e-6;
  rows.forEach(function (row, r) { row.forEach(function (v, c) { data[r * C + c] = v; m = Math.max(m, Math.abs(v)); }); });
  return { data: data, rows: R, cols: C, m: m };
}

function drawMap(id, rows) {
  var c = document.getElementById(id), g = grid(rows);
  var hm = heatmap2d(c, { data: g.data, rows: g.rows, cols: g.cols, vmin: -g.m, vmax: g.m, cmap: "burd" });
  fitCanvas(c);
  clear2d(c);
  hm.draw();
  return hm;
}

function drawSignal(data, w) {
  var win = data.windows[w];
  var p = plot2d.create(document.getElementById("ue-signal"), {
    title: "Window " + data.labels[w], x: timeAxis(data.labels[w], data.step_minutes * 60, win.aggregate_w.length),
    lanes: [{ title: "aggregate", y: { label: "power", unit: "W" }, series: [{ name: "aggregate", y: Float32Array.from(win.aggregate_w), kind: "area" }] },
            { title: "instance-normalised power", y: { label: "(x − mean) / std", unit: "1" }, series: [{ name: "normalised", y: Float32Array.from(win.normalised), kind: "line" }] }] });
  p.draw();
  setText(document.getElementById("ue-stats"), "Stats token input for this window (scaled units): mean " + fmt(win.mean, 4) + ", std " + fmt(win.std, 4) + ".");
}

function drawAll(data, w) {
  var win = data.windows[w];
  drawSignal(data, w);
  return { stem: drawMap("ue-stem", win.stem), time: drawMap("ue-time", win.time), tokens: drawMap("ue-tokens", win.tokens) };
}

function start(page) {
  var data = page.data, S = { window: 0 };
  S.maps = drawAll(data, 0);
  var sel = controls.select(document.getElementById("nb-controls"), "Window",
    data.samples.map(function (s, i) { return { value: i, label: "batch sample " + s + " · " + data.labels[i] }; }), 0,
    function (v) { S.window = Number(v); S.maps = drawAll(data, S.window); });
  sel.id = "ue-window"; sel.previousSibling.htmlFor = sel.id;   // the control and its label
  stateInUrl([["window", sel]]);   // deep links and the findings' presets (#window=2)
  ready();
  return { state: S };
}

registerPage({ slug: "embedding", start: start });

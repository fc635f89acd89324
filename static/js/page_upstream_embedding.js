/* page_upstream_embedding.js: the Embedding page of an upstream model (nilmbuild/site/views/upstream_embedding.py):
 * the selected window's aggregate and normalised power (plot2d), the DilatedBlock output, the time projection and
 * the tokens with the stats token last (heatmap2d, diverging colours, symmetric range per map), each map's time
 * axis in clock time (UTC, time_axis.js) from the window's start, the stats token's column named. */
import { registerPage } from "./register.js";
import { stateInUrl } from "./url_state.js";
import { context2d, controls, fmt, font, ready, setText } from "./core.js";
import { fitCanvas } from "./grid.js";
import { clear2d, heatmap2d } from "./heatmap2d.js";
import { plot2d } from "./plot2d.js";
import { stepTicks, timeAxis, windowClock } from "./time_axis.js";

var PAD = { l: 72, r: 8, t: 4, b: 34 };   // room for the row labels left and the clock ticks below each map

// rows of numbers -> {data: Float32Array, rows, cols, m: max |value|}
function grid(rows) {
  var R = rows.length, C = rows[0].length, data = new Float32Array(R * C), m = 1e-6;
  rows.forEach(function (row, r) { row.forEach(function (v, c) { data[r * C + c] = v; m = Math.max(m, Math.abs(v)); }); });
  return { data: data, rows: R, cols: C, m: m };
}

// at least two clock ticks over the L steps, clear of the stats token's label (asking for more where needed)
function clearTicks(clock, L, n, stats) {
  var keep = function (t) { return !stats || t.step <= L - 1 - L / 12; }, ticks = [];
  for (var k = n; ticks.length < 2 && k < n + 8; k++) ticks = stepTicks(clock, 0, L - 1, k).filter(keep);
  return ticks;
}

// axes of one map: first and last row named, clock ticks over the L time steps, "stats" under a stats column
function mapAxes(c, b, g, axis) {
  var ctx = context2d(c), L = axis.steps, stats = g.cols === L + 1;
  ctx.setTransform(c.width / c.clientWidth, 0, 0, c.height / c.clientHeight, 0, 0);
  ctx.font = font(11); ctx.fillStyle = "#1b1f24"; ctx.textAlign = "right"; ctx.textBaseline = "middle";
  ctx.fillText(axis.row + " 0", b.x - 4, b.y + b.height / (2 * g.rows));
  if (g.rows > 1) ctx.fillText(axis.row + " " + (g.rows - 1), b.x - 4, b.y + b.height - b.height / (2 * g.rows));
  var ticks = clearTicks(axis.clock, L, Math.max(2, Math.floor(b.width / 90)), stats).map(function (t) {
    return { step: t.step, label: t.label, x: b.x + ((t.step + 0.5) / g.cols) * b.width };
  });
  ctx.textAlign = "center"; ctx.textBaseline = "top";
  ticks.forEach(function (t) { ctx.fillText(t.label, t.x, b.y + b.height + 3); });
  ctx.fillText("time (UTC)" + (stats ? "; last column: the stats token" : ""), b.x + b.width / 2, b.y + b.height + 18);
  if (stats) {   // right-aligned at the map's right edge, above which the stats column ends
    ctx.fillStyle = "#D55E00"; ctx.textAlign = "right"; ctx.fillText("stats", b.x + b.width + PAD.r, b.y + b.height + 3);
  }
  return ticks;
}

function drawMap(id, rows, axis) {
  var c = document.getElementById(id), g = grid(rows);
  var hm = heatmap2d(c, { data: g.data, rows: g.rows, cols: g.cols, vmin: -g.m, vmax: g.m, cmap: "burd" });
  fitCanvas(c);
  clear2d(c);
  var b = { x: PAD.l, y: PAD.t, width: c.clientWidth - PAD.l - PAD.r, height: c.clientHeight - PAD.t - PAD.b };
  hm.draw(b);
  hm.ticks = mapAxes(c, b, g, axis);   // the drawn clock ticks (tests read them)
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
  var win = data.windows[w], clock = windowClock(data.labels[w], data.step_minutes * 60), L = win.aggregate_w.length;
  var axis = function (row) { return { clock: clock, steps: L, row: row }; };
  drawSignal(data, w);
  return { stem: drawMap("ue-stem", win.stem, axis("ch")), time: drawMap("ue-time", win.time, axis("ch")),
           tokens: drawMap("ue-tokens", win.tokens, axis("feature")) };
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

/* playground_plot.js: stacked line-plot lanes on a 2D canvas sharing one time axis, and the mapping from a
 * pointer back to (step, value) in a lane (for drawing on the aggregate).
 *   lanes: [{title, unit, min?, max?, series: [{name, values, color}], hlines?: [{y, color}], vline?: step,
 *            negNote?: why a value is below 0, written under the lane's title when one is}]
 *   A lane with draw(g, {x0, x1, top, bot, sx}, n) draws its own box content (explain_strip.js's strip).
 * x: a label, or {label, clock: {start: UTC ms of step 0, per: ms per step}} for clock-time ticks (time_axis.js).
 * Titles, notes and the axis label wrap onto as many lines as the canvas' width needs (a phone: two or three), and
 * the lanes share the height left; every text's box is recorded (plot2d.put) in the chart's `labels`, which the
 * browser tests check for overlaps and for text cut at the canvas edge (tests/browser/test_labels.py). */
import { context2d, sizeBacking } from "./core.js";
import { plot2d } from "./plot2d.js";
import { stepTicks } from "./time_axis.js";

var PAD = { left: 64, right: 12, top: 2, gap: 8, ticks: 19 };
var LINE = 13, FONT = "11px system-ui, sans-serif";

// the lanes' header lines (title, then the note when a value is below 0) and the axis label's, wrapped to the width
function texts(g, lanes, exts, x, w) {
  var room = w - PAD.left - PAD.right;
  var heads = lanes.map(function (lane, i) {
    var lines = plot2d.wrap(g, lane.title + " (" + lane.unit + ")", room).map(function (t) { return { text: t, note: false }; });
    if (lane.negNote && exts[i][0] < 0) plot2d.wrap(g, lane.negNote, room).forEach(function (t) { lines.push({ text: t, note: true }); });
    return lines;
  });
  return { heads: heads, xLabel: plot2d.wrap(g, x.label, w - 8) };
}

export function layout(canvas, t) {
  var w = canvas.clientWidth, h = canvas.clientHeight, n = t.heads.length, tops = [], y = PAD.top;
  var headH = t.heads.map(function (lines) { return lines.length * LINE + 5; });
  var bottom = PAD.ticks + t.xLabel.length * LINE + 2;
  var laneH = (h - PAD.top - bottom - PAD.gap * (n - 1) - headH.reduce(function (a, b) { return a + b; }, 0)) / n;
  headH.forEach(function (hh) { y += hh; tops.push(y); y += laneH + PAD.gap; });
  return { w: w, h: h, x0: PAD.left, x1: w - PAD.right, laneH: laneH, bottom: bottom,
           laneTop: function (i) { return tops[i]; } };
}

function extent(lane) {
  var lo = lane.min, hi = lane.max;
  if (lo === undefined || hi === undefined) {
    var mn = Infinity, mx = -Infinity;
    lane.series.forEach(function (s) { for (var v of s.values) { if (v < mn) mn = v; if (v > mx) mx = v; } });
    if (lo === undefined) lo = Math.min(0, mn);
    if (hi === undefined) hi = mx > lo ? mx * 1.05 : lo + 1;
  }
  return [lo, hi];
}

function drawLaneFrame(g, L, lines, geo, labels) {   // the lane's box and its header lines above it
  g.strokeStyle = "#999"; g.lineWidth = 1; g.strokeRect(L.x0, geo.top, L.x1 - L.x0, geo.bot - geo.top);
  g.textAlign = "left"; g.textBaseline = "middle";
  lines.forEach(function (ln, k) {
    g.fillStyle = ln.note ? "#57606a" : "#222";
    plot2d.put(g, labels, ln.text, L.x0, geo.top - 5 - 6 - (lines.length - 1 - k) * LINE);
  });
}
function drawLaneAxes(g, L, lines, geo, sy, labels) {   // frame, header, >= 2 nice labelled y ticks with grid lines
  drawLaneFrame(g, L, lines, geo, labels);
  g.textAlign = "right"; g.textBaseline = "middle"; g.fillStyle = "#222";
  plot2d.ticks(geo.min, geo.max, Math.max(2, Math.floor((geo.bot - geo.top) / 28))).forEach(function (t) {
    var y = sy(t);
    g.strokeStyle = "#eceff2"; g.beginPath(); g.moveTo(L.x0 + 1, y); g.lineTo(L.x1 - 1, y); g.stroke();
    plot2d.put(g, labels, fmt(t), L.x0 - 4, y);
  });
  g.textBaseline = "alphabetic";
}
function drawLaneData(g, L, lane, geo, sx, sy) {
  (lane.hlines || []).forEach(function (hl) {
    g.strokeStyle = hl.color; g.setLineDash([4, 3]); g.beginPath();
    g.moveTo(L.x0, sy(hl.y)); g.lineTo(L.x1, sy(hl.y)); g.stroke(); g.setLineDash([]);
  });
  if (lane.vline !== undefined) {
    g.strokeStyle = "#000"; g.beginPath(); g.moveTo(sx(lane.vline), geo.top); g.lineTo(sx(lane.vline), geo.bot); g.stroke();
  }
  lane.series.forEach(function (s) {
    g.strokeStyle = s.color; g.lineWidth = 1.5; g.beginPath();
    for (var t = 0; t < s.values.length; t++) {
      var y = Math.max(geo.top, Math.min(geo.bot, sy(s.values[t])));
      t ? g.lineTo(sx(t), y) : g.moveTo(sx(t), y);
    }
    g.stroke();
  });
}
// Clock-time ticks (x.clock) or step numbers, and the axis label; no ticks under a last lane that draws its own
// (an attribution strip: explain_strip.js), so its times are not written twice.
function drawXAxis(g, L, n, x, xLabel, sx, labels, ownTicks) {
  var most = Math.max(2, Math.floor((L.x1 - L.x0) / 80)), ticks, yb = L.h - L.bottom, prev = -Infinity;
  if (x.clock) ticks = stepTicks(x.clock, 0, n - 1, most);
  else ticks = plot2d.ticks(0, n - 1, most).map(function (t) { return { step: t, label: String(t) }; });
  g.fillStyle = "#222"; g.textAlign = "center"; g.textBaseline = "middle";
  (ownTicks ? [] : ticks).forEach(function (tk) {   // kept inside the canvas; one touching its left neighbour is left out
    var w = g.measureText(tk.label).width, cx = Math.max(w / 2 + 1, Math.min(L.w - w / 2 - 1, sx(tk.step)));
    if (cx - w / 2 < prev + 4) return;
    plot2d.put(g, labels, tk.label, cx, yb + 12); prev = cx + w / 2;   // clear of the lowest y tick's label
  });
  xLabel.forEach(function (line, k) { plot2d.put(g, labels, line, L.w / 2, yb + PAD.ticks + 6 + k * LINE); });
  g.textBaseline = "alphabetic";
}

export function drawLanes(canvas, lanes, n, x) {
  var dpr = window.devicePixelRatio || 1, g = context2d(canvas), chart = plot2d.chartOf(canvas), labels = (chart.labels = []);
  x = typeof x === "string" ? { label: x } : x;
  g.font = FONT;
  var exts = lanes.map(extent), t = texts(g, lanes, exts, x, canvas.clientWidth), L = layout(canvas, t);
  sizeBacking(canvas, Math.round(L.w * dpr), Math.round(L.h * dpr));
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, L.w, L.h);
  g.font = FONT;
  var sx = function (s) { return L.x0 + (L.x1 - L.x0) * s / (n - 1); };
  var geo = lanes.map(function (lane, i) {
    var top = L.laneTop(i), gl = { top: top, bot: top + L.laneH, min: exts[i][0], max: exts[i][1] };
    var sy = function (v) { return gl.bot - (gl.bot - gl.top) * (v - gl.min) / (gl.max - gl.min); };
    if (lane.draw) {
      drawLaneFrame(g, L, t.heads[i], gl, labels);
      g.textBaseline = "alphabetic";
      lane.draw(g, { x0: L.x0, x1: L.x1, top: gl.top, bot: gl.bot, sx: sx }, n);
      return gl;
    }
    drawLaneAxes(g, L, t.heads[i], gl, sy, labels);
    drawLaneData(g, L, lane, gl, sx, sy);
    return gl;
  });
  drawXAxis(g, L, n, x, t.xLabel, sx, labels, Boolean(lanes[lanes.length - 1].ownTicks));
  return { layout: L, lanes: geo, n: n };
}

function fmt(v) {
  var a = Math.abs(v);
  return a >= 100 ? v.toFixed(0) : a >= 1 ? v.toFixed(1) : v.toPrecision(2);
}

// Pointer (clientX, clientY) -> {step, value} in lane i, or null outside it horizontally.
export function pointToLane(canvas, geo, i, clientX, clientY) {
  var r = canvas.getBoundingClientRect(), L = geo.layout, lane = geo.lanes[i];
  var x = clientX - r.left, y = clientY - r.top;
  if (x < L.x0 - 4 || x > L.x1 + 4) return null;
  var step = Math.round((x - L.x0) / (L.x1 - L.x0) * (geo.n - 1));
  var value = lane.min + (lane.bot - y) / (lane.bot - lane.top) * (lane.max - lane.min);
  return { step: Math.max(0, Math.min(geo.n - 1, step)), value: value, inside: y >= lane.top - 8 && y <= lane.bot + 8 };
}

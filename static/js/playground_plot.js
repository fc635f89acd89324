/* playground_plot.js: stacked line-plot lanes on a 2D canvas sharing one time axis, and the mapping from a
 * pointer back to (step, value) in a lane (for drawing on the aggregate).
 *   lanes: [{title, unit, min?, max?, series: [{name, values, color}], hlines?: [{y, color}], vline?: step,
 *            negNote?: text drawn in the lane when a value is below 0}]
 *   A lane with draw(g, {x0, x1, top, bot, sx}, n) draws its own box content (explain_strip.js's strip).
 * x: a label, or {label, clock: {start: UTC ms of step 0, per: ms per step}} for clock-time ticks. */
import { context2d, sizeBacking } from "./core.js";
import { plot2d } from "./plot2d.js";

var PAD = { left: 64, right: 12, top: 18, bottom: 30, gap: 26 };

export function layout(canvas, nLanes) {
  var w = canvas.clientWidth, h = canvas.clientHeight;
  var laneH = (h - PAD.top - PAD.bottom - PAD.gap * (nLanes - 1)) / nLanes;
  return { w: w, h: h, x0: PAD.left, x1: w - PAD.right, laneH: laneH,
           laneTop: function (i) { return PAD.top + i * (laneH + PAD.gap); } };
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

function drawLaneFrame(g, L, lane, geo) {   // the lane's box and its title
  g.strokeStyle = "#999"; g.lineWidth = 1; g.strokeRect(L.x0, geo.top, L.x1 - L.x0, geo.bot - geo.top);
  g.fillStyle = "#222"; g.textAlign = "left";
  g.fillText(lane.title + " (" + lane.unit + ")", L.x0, geo.top - 5);
}
function drawLaneAxes(g, L, lane, geo, sy) {   // frame, title, >= 2 nice labelled y ticks with grid lines
  drawLaneFrame(g, L, lane, geo);
  g.textAlign = "right"; g.textBaseline = "middle";
  plot2d.ticks(geo.min, geo.max, Math.max(2, Math.floor((geo.bot - geo.top) / 28))).forEach(function (t) {
    var y = sy(t);
    g.strokeStyle = "#eceff2"; g.beginPath(); g.moveTo(L.x0 + 1, y); g.lineTo(L.x1 - 1, y); g.stroke();
    g.fillText(fmt(t), L.x0 - 4, y);
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
  if (lane.negNote && geo.min < 0) {   // say in place why a trace dips below 0, on a light box over the lane's corner
    var w = g.measureText(lane.negNote).width;
    g.fillStyle = "rgba(255,255,255,0.88)"; g.fillRect(L.x1 - w - 10, geo.top + 2, w + 8, 15);
    g.fillStyle = "#57606a"; g.textAlign = "right"; g.fillText(lane.negNote, L.x1 - 6, geo.top + 13);
  }
}
function drawXAxis(g, L, n, x, sx) {   // clock-time ticks (x.clock) or step numbers, and the axis label
  var ax = typeof x === "string" ? { label: x } : x, ticks;
  if (ax.clock) ticks = plot2d.clockTicks(0, n - 1, Math.max(2, Math.floor((L.x1 - L.x0) / 80)), ax.clock);
  else ticks = plot2d.ticks(0, n - 1, Math.max(2, Math.floor((L.x1 - L.x0) / 80)));
  g.fillStyle = "#222"; g.textAlign = "center";
  ticks.forEach(function (t) { g.fillText(ax.clock ? plot2d.clockText(ax.clock, t) : String(t), sx(t), L.h - PAD.bottom + 14); });
  g.fillText(ax.label, (L.x0 + L.x1) / 2, L.h - 3);
}

export function drawLanes(canvas, lanes, n, x) {
  var dpr = window.devicePixelRatio || 1, L = layout(canvas, lanes.length);
  sizeBacking(canvas, Math.round(L.w * dpr), Math.round(L.h * dpr));
  var g = context2d(canvas);
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, L.w, L.h);
  g.font = "11px system-ui, sans-serif";
  var sx = function (t) { return L.x0 + (L.x1 - L.x0) * t / (n - 1); };
  var geo = lanes.map(function (lane, i) {
    var top = L.laneTop(i), ext = extent(lane), gl = { top: top, bot: top + L.laneH, min: ext[0], max: ext[1] };
    var sy = function (v) { return gl.bot - (gl.bot - gl.top) * (v - gl.min) / (gl.max - gl.min); };
    if (lane.draw) {
      drawLaneFrame(g, L, lane, gl);
      lane.draw(g, { x0: L.x0, x1: L.x1, top: gl.top, bot: gl.bot, sx: sx }, n);
      return gl;
    }
    drawLaneAxes(g, L, lane, gl, sy);
    drawLaneData(g, L, lane, gl, sx, sy);
    return gl;
  });
  drawXAxis(g, L, n, x, sx);
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

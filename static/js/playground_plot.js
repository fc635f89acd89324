/* playground_plot.js: stacked line-plot lanes on a 2D canvas sharing one time axis, and the mapping from a
 * pointer back to (step, value) in a lane (for drawing on the aggregate).
 *   lanes: [{title, unit, min?, max?, series: [{name, values, color}], hlines?: [{y, color}], vline?: step}]
 *   A lane with draw(g, {x0, x1, top, bot, sx}, n) draws its own box content (explain_strip.js's strip). */
import { context2d, sizeBacking } from "./core.js";

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

export function drawLanes(canvas, lanes, n, xLabel) {
  var dpr = window.devicePixelRatio || 1, L = layout(canvas, lanes.length);
  sizeBacking(canvas, Math.round(L.w * dpr), Math.round(L.h * dpr));
  var g = context2d(canvas);
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, L.w, L.h);
  g.font = "11px system-ui, sans-serif";
  var sx = function (t) { return L.x0 + (L.x1 - L.x0) * t / (n - 1); };
  var geo = [];
  lanes.forEach(function (lane, i) {
    var top = L.laneTop(i), bot = top + L.laneH, ext = extent(lane);
    var sy = function (v) { return bot - (bot - top) * (v - ext[0]) / (ext[1] - ext[0]); };
    geo.push({ top: top, bot: bot, min: ext[0], max: ext[1] });
    g.strokeStyle = "#999"; g.lineWidth = 1; g.strokeRect(L.x0, top, L.x1 - L.x0, bot - top);
    g.fillStyle = "#222"; g.textAlign = "left";
    g.fillText(lane.title + " (" + lane.unit + ")", L.x0, top - 5);
    if (lane.draw) return lane.draw(g, { x0: L.x0, x1: L.x1, top: top, bot: bot, sx: sx }, n);
    g.textAlign = "right";
    g.fillText(fmt(ext[1]), L.x0 - 4, top + 9);
    g.fillText(fmt(ext[0]), L.x0 - 4, bot);
    (lane.hlines || []).forEach(function (hl) {
      g.strokeStyle = hl.color; g.setLineDash([4, 3]); g.beginPath();
      g.moveTo(L.x0, sy(hl.y)); g.lineTo(L.x1, sy(hl.y)); g.stroke(); g.setLineDash([]);
    });
    if (lane.vline !== undefined) {
      g.strokeStyle = "#000"; g.beginPath(); g.moveTo(sx(lane.vline), top); g.lineTo(sx(lane.vline), bot); g.stroke();
    }
    lane.series.forEach(function (s) {
      g.strokeStyle = s.color; g.lineWidth = 1.5; g.beginPath();
      for (var t = 0; t < s.values.length; t++) {
        var y = Math.max(top, Math.min(bot, sy(s.values[t])));
        t ? g.lineTo(sx(t), y) : g.moveTo(sx(t), y);
      }
      g.stroke();
    });
  });
  g.fillStyle = "#222"; g.textAlign = "center";
  for (var k = 0; k <= 8; k++) {
    var t = Math.round((n - 1) * k / 8);
    g.fillText(String(t), sx(t), L.h - PAD.bottom + 14);
  }
  g.fillText(xLabel, (L.x0 + L.x1) / 2, L.h - 3);
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

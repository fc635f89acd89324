/* explain_strip.js: an attribution as a colour strip lane for playground_plot.js's drawLanes (its `draw` hook):
 * one cell per step in the diverging "burd" colormap (colormaps.js: ColorBrewer RdBu, colour-blind safe; red
 * raises the explained output, blue lowers it, white 0, symmetric about 0), the explained interval or step framed
 * in black, and a clock-time axis (UTC) beneath.
 *
 *   stripLane({title, unit, values (Float64Array | null), vmax, mark: {lo, hi}, startMs, stepS, message, progress: [done, total] | null,
 *               onDraw})
 *     onDraw(g, box): told where the strip was drawn, so that drawProgress(g, box, done, total) repaints it alone
 *   clockTicks(startMs, stepS, n, maxTicks) -> [{step, label "HH:MM"}] on whole minutes, hours, ... (UTC): the
 *     site's one clock axis (time_axis.js stepTicks) over steps 0..n-1
 */
import { colormaps } from "./colormaps.js";
import { stepTicks } from "./time_axis.js";

export var CMAP = "burd";
var AXIS_H = 16; // px under the strip: the target mark and the clock labels

export function clockTicks(startMs, stepS, n, maxTicks) {
  return stepTicks({ start: startMs, per: stepS * 1000 }, 0, n - 1, maxTicks);
}

// Cell colour for value v on a scale symmetric about 0 (vmax > 0).
export function cellColor(v, vmax) { return colormaps.css(CMAP, 0.5 + 0.5 * v / vmax); }

function drawCells(g, box, s, n) {
  var bot = box.bot - AXIS_H;
  if (!s.values) {
    g.fillStyle = "#eeeeee"; g.fillRect(box.x0, box.top, box.x1 - box.x0, bot - box.top);
    g.fillStyle = "#444"; g.textAlign = "center";
    g.fillText(s.message || "", (box.x0 + box.x1) / 2, (box.top + bot) / 2 + 4);
    return;
  }
  for (var t = 0; t < n; t++) {
    var a = Math.max(box.x0, box.sx(t - 0.5)), b = Math.min(box.x1, box.sx(t + 0.5));
    g.fillStyle = cellColor(s.values[t], s.vmax);
    g.fillRect(a, box.top, b - a + 0.5, bot - box.top);
  }
}

// The explained interval or step: a black frame around its cells.
function drawMark(g, box, mark) {
  var a = Math.max(box.x0, box.sx(mark.lo - 0.5)), b = Math.min(box.x1, box.sx(mark.hi - 0.5));
  g.strokeStyle = "#000"; g.lineWidth = 2;
  g.strokeRect(a, box.top + 1, Math.max(2, b - a), box.bot - AXIS_H - box.top - 1);
  g.lineWidth = 1;
}

// While the passes run: the count and a small bar in the middle of the strip (not along its time axis), a repaint of
// the strip only.
export function drawProgress(g, box, done, total) {
  var bot = box.bot - AXIS_H, mid = (box.x0 + box.x1) / 2, y = (box.top + bot) / 2, half = Math.min(120, (box.x1 - box.x0) / 3);
  g.fillStyle = "#eeeeee"; g.fillRect(box.x0, box.top, box.x1 - box.x0, bot - box.top);
  g.strokeStyle = "#666"; g.strokeRect(mid - half, y + 4, 2 * half, 6);
  g.fillStyle = "#666"; g.fillRect(mid - half, y + 4, 2 * half * (total ? done / total : 0), 6);
  g.fillStyle = "#222"; g.textAlign = "center";
  g.fillText("explaining: " + done + " of " + total + " model runs", mid, y - 3);
}

function drawClock(g, box, s, n) {
  g.fillStyle = "#222"; g.strokeStyle = "#222"; g.textAlign = "center";
  clockTicks(s.startMs, s.stepS, n, Math.max(2, Math.floor((box.x1 - box.x0) / 60))).forEach(function (tk) {
    var x = box.sx(tk.step);
    g.beginPath(); g.moveTo(x, box.bot - AXIS_H); g.lineTo(x, box.bot - AXIS_H + 3); g.stroke();
    g.fillText(tk.label, Math.max(box.x0 + 14, Math.min(box.x1 - 14, x)), box.bot - 2);
  });
  g.textAlign = "right";
  g.fillText("UTC", box.x0 - 4, box.bot - 2);
}

export function stripLane(s) {
  return {
    title: s.title, unit: s.unit, series: [], ownTicks: true,   // its clock ticks are drawn inside it (drawClock)
    draw: function (g, box, n) {
      if (s.onDraw) s.onDraw(g, box);
      if (!s.values && s.progress) drawProgress(g, box, s.progress[0], s.progress[1]);
      else drawCells(g, box, s, n);
      if (s.mark) drawMark(g, box, s.mark);
      drawClock(g, box, s, n);
    },
  };
}

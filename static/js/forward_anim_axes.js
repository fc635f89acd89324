/* forward_anim_axes.js: axis labels of the animated forward pass, drawn on its 2D overlay (CSS pixels).
 *   animAxes.pre(g, blk, L, rowsText, clock)   before the transpose: time along the bottom, rows (channels /
 *                                              features) named on the left; clock: the window's time_axis.js
 *                                              windowClock (ticks in clock time, UTC)
 *   animAxes.turning(g, blk)                   during the transpose's 90° turn
 *   animAxes.post(g, blk, L, name, n, title, clock)   after it: time upwards on the left, `n` `name`s along the bottom
 *   animAxes.queries(g, blk, ys, xr)           the attention's query steps (triangles) and a key
 *   animAxes.bar(g, bar, text)                 the name of a γ / β bar
 */
import { font } from "./core.js";
import { animDraw } from "./forward_anim_draw.js";
import { stepTicks } from "./time_axis.js";

var SMALL = font(11), BOLD = font(12, 600), INK = "#1b1f24", MUTED = "#57606a";

// [{step, label}] of the time axis: clock time (UTC) of the window
function timeTicks(L, clock) { return stepTicks(clock, 0, L - 1, 6); }

function text(g, s, x, y, align, base, f, colour) {
  g.font = f || SMALL; g.fillStyle = colour || INK; g.textAlign = align; g.textBaseline = base; g.fillText(s, x, y);
}

function pre(g, blk, L, rowsText, clock) {
  var c = animDraw.corners(blk), x0 = c[0][0], x1 = c[1][0], yb = c[3][1], yt = c[0][1];
  g.strokeStyle = MUTED; g.lineWidth = 1;
  timeTicks(L, clock).forEach(function (tk) {
    var x = x0 + (tk.step + 0.5) / L * (x1 - x0);
    g.beginPath(); g.moveTo(x, yb); g.lineTo(x, yb + 4); g.stroke();
    text(g, tk.label, x, yb + 6, "center", "top");
  });
  text(g, "time → (UTC)", (x0 + x1) / 2, yb + 22, "center", "top");
  g.beginPath(); g.moveTo(x0 - 6, yt); g.lineTo(x0 - 10, yt); g.lineTo(x0 - 10, yb); g.lineTo(x0 - 6, yb); g.stroke();
  rowsText.split("  ").forEach(function (s, i) { text(g, s, x0 - 14, (yt + yb) / 2 + (i - 0.5) * 14, "right", "middle", i ? SMALL : BOLD); });
}

function turning(g, blk) {
  text(g, "turning by 90° (time axis → upwards)", blk.centre[0], 10, "center", "top", BOLD, MUTED);
}

function post(g, blk, L, name, n, title, clock) {
  var c = animDraw.corners(blk), xl = Math.min(c[0][0], c[2][0]), xr = Math.max(c[0][0], c[2][0]);
  var yb = Math.max(c[0][1], c[2][1]), yt = Math.min(c[0][1], c[2][1]);
  g.strokeStyle = MUTED; g.lineWidth = 1;
  timeTicks(L, clock).forEach(function (tk) {
    var y = yb - (tk.step + 0.5) / L * (yb - yt);
    g.beginPath(); g.moveTo(xl, y); g.lineTo(xl - 4, y); g.stroke();
    text(g, tk.label, xl - 6, y, "right", "middle");
  });
  g.save(); g.translate(xl - 44, (yt + yb) / 2); g.rotate(-Math.PI / 2);
  text(g, "time ↑ (UTC)", 0, 0, "center", "middle"); g.restore();
  var first = name + " 0", last = String(n - 1);
  g.font = SMALL;   // the end labels only where both fit under the block (a phone's narrow block: the title alone)
  if (g.measureText(first).width + g.measureText(last).width + 8 <= xr - xl) {
    text(g, first, xl, yb + 6, "left", "top", SMALL, MUTED);
    text(g, last, xr, yb + 6, "right", "top", SMALL, MUTED);
  }
  text(g, title === undefined ? n + " " + name + "s →" : title || n + " " + name + "s →", (xl + xr) / 2, yb + 22, "center", "top", BOLD);
}

function queries(g, blk, ys, xr) {
  g.fillStyle = INK;
  ys.forEach(function (y) { g.beginPath(); g.moveTo(xr + 1, y); g.lineTo(xr + 8, y - 4); g.lineTo(xr + 8, y + 4); g.closePath(); g.fill(); });
  text(g, "◀ query steps (colour = which query); particles land on key steps", xr + 14, 10, "left", "top", SMALL, MUTED);
}

function bar(g, b, s) {
  var c = animDraw.corners(b), xl = Math.min(c[0][0], c[2][0]);
  text(g, s, xl - 6, b.centre[1], "right", "middle", BOLD);
}

export const animAxes = { pre: pre, turning: turning, post: post, queries: queries, bar: bar };

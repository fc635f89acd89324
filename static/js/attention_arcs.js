/* attention_arcs.js: encoder attention as arcs (encoder-film.md 6.10). At the selected query t, one arc from t to
 * each of its strongest keys s, thicker and more opaque for a larger weight, over the window's time axis with the
 * sample's aggregate power below. Weights come from the caller (capture.attentionRow: the captured q, k, lse).
 * attentionArcs.strongest(w, k) -> [{key, weight}] (the k largest weights, largest first, zeros left out)
 * attentionArcs.draw(canvas, {query, weights, k, agg, unit, colour, title}) -> the arcs drawn
 */
import { context2d, fmt, font } from "./core.js";
import { plot2d } from "./plot2d.js";
var PAD = { l: 84, r: 16, t: 24, b: 40 };   // l: room for the "max ... W" label of the aggregate

function strongest(w, k) {
  var idx = [];
  for (var j = 0; j < w.length; j++) if (w[j] > 0) idx.push(j);
  idx.sort(function (a, b) { return w[b] - w[a] || a - b; });
  return idx.slice(0, k).map(function (j) { return { key: j, weight: w[j] }; });
}

function fit(canvas) {
  var dpr = window.devicePixelRatio || 1, w = Math.round(canvas.clientWidth * dpr), h = Math.round(canvas.clientHeight * dpr);
  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
}

function signal(g, agg, x, y0, h) {
  var m = 0, n = agg.length;
  for (var i = 0; i < n; i++) m = Math.max(m, agg[i]);
  g.fillStyle = "rgba(86,180,233,0.35)"; g.strokeStyle = "#56B4E9"; g.lineWidth = 1;
  g.beginPath(); g.moveTo(x(0), y0);
  for (i = 0; i < n; i++) g.lineTo(x(i), y0 - (m > 0 ? agg[i] / m : 0) * h);
  g.lineTo(x(n - 1), y0); g.closePath(); g.fill(); g.stroke();
  return m;
}

function draw(canvas, o) {
  fit(canvas);
  var dpr = window.devicePixelRatio || 1, W = canvas.clientWidth, H = canvas.clientHeight, L = o.weights.length;
  var g = context2d(canvas);
  g.setTransform(dpr, 0, 0, dpr, 0, 0); g.fillStyle = "#fff"; g.fillRect(0, 0, W, H);
  var x = function (t) { return PAD.l + ((t + 0.5) / L) * (W - PAD.l - PAD.r); };
  var base = H - PAD.b, sigH = 0.22 * (H - PAD.t - PAD.b), arcs = strongest(o.weights, o.k);
  var m = signal(g, o.agg, x, base, sigH), wmax = arcs.length ? arcs[0].weight : 1, top = base - sigH - 4;
  arcs.slice().reverse().forEach(function (a) {            // strongest drawn last, on top
    var x0 = x(o.query), x1 = x(a.key), r = Math.abs(x1 - x0) / 2, rel = a.weight / wmax;
    var ry = Math.max(0.5, Math.min(top - PAD.t, Math.max(12, r)));   // >= 0.5: a frame too short for the arc still draws
    g.strokeStyle = o.colour; g.globalAlpha = 0.35 + 0.65 * rel; g.lineWidth = 1 + 7 * rel;
    g.beginPath(); g.ellipse((x0 + x1) / 2, top, Math.max(r, 0.5), ry, 0, Math.PI, 2 * Math.PI); g.stroke();
  });
  g.globalAlpha = 1;
  g.fillStyle = "#D55E00"; g.beginPath(); g.arc(x(o.query), top, 5, 0, 2 * Math.PI); g.fill();
  g.font = font(12); g.fillStyle = "#1b1f24"; g.textAlign = "center"; g.textBaseline = "top";
  plot2d.ticks(0, L - 1, 8).forEach(function (t) { g.fillText(String(t), x(t), base + 4); });
  g.fillText("time in the window (min): the orange dot is the query t = " + o.query + "; arcs end at its " + arcs.length +
             " strongest keys s", PAD.l + (W - PAD.l - PAD.r) / 2, base + 20);
  g.textAlign = "left"; g.textBaseline = "bottom"; g.font = font(13, 600);
  g.fillText(o.title, PAD.l, PAD.t - 6);
  g.font = font(11); g.textAlign = "right"; g.textBaseline = "middle"; g.fillStyle = "#57606a";
  g.fillText("aggregate", PAD.l - 6, base - sigH / 2); g.fillText("max " + fmt(m, 4) + " " + o.unit, PAD.l - 6, base - sigH - 8);
  return arcs;
}

export const attentionArcs = { strongest: strongest, draw: draw };

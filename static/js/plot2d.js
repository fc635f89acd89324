/* plot2d.js: line / area / step / bar charts on a Canvas2D, with labelled axes, ticks, a legend,
 * several series per lane, lanes stacked on one shared x axis, and a vertical cursor.
 * Drawing is deterministic (no animation). Imports fmt, tooltip (core.js) and palette (colormaps.js).
 *
 *   var p = plot2d.create(canvas, {
 *     title: "Power", x: {label: "time", unit: "min"},
 *     lanes: [{title: "aggregate", y: {label: "power", unit: "W"},
 *              series: [{name: "input", y: Float32Array, kind: "line"}]}]});
 *   p.draw(); p.setCursor(42); plot2d.hover(p);
 * Series: {name, y, x (optional; default 0..n-1), kind: line|area|step|bar, color, width, dash}.
 * Axes: {label, unit, min, max, zero} (min/max default to the data range; y includes 0 for area/bar, and for any
 *   series with zero: true, so that a nearly constant lane is drawn near its zero line, not stretched edge to edge).
 */
import { palette } from "./colormaps.js";
import { context2d, fmt, font, tooltip } from "./core.js";

var FONT = font(12);
var BOLD = font(13, 600);
var AXIS = "#57606a", GRID = "#e6e9ed", TEXT = "#1b1f24";

// "nice" ticks (1, 2, 5 x 10^k) covering [min, max], about n of them
function ticks(min, max, n) {
  if (!(max > min)) return [min];
  var raw = (max - min) / Math.max(1, n || 5), mag = Math.pow(10, Math.floor(Math.log10(raw)));
  var step = [1, 2, 5, 10].map(function (m) { return m * mag; }).find(function (s) { return s >= raw; });
  var out = [], t0 = Math.ceil(min / step - 1e-9) * step;
  for (var t = t0; t <= max + step * 1e-9; t += step) out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  return out;
}

function axisTitle(ax) { return (ax.label || "") + (ax.unit ? " (" + ax.unit + ")" : ""); }

function extent(lane, key, xs) {
  var lo = Infinity, hi = -Infinity;
  lane.series.forEach(function (s) {
    var arr = key === "x" ? xs(s) : s.y;
    for (var i = 0; i < arr.length; i++) { var v = arr[i]; if (v < lo) lo = v; if (v > hi) hi = v; }
    if (key === "y" && (s.kind === "area" || s.kind === "bar")) { lo = Math.min(lo, 0); hi = Math.max(hi, 0); }
  });
  if (key === "y" && lane.y && lane.y.zero) { lo = Math.min(lo, 0); hi = Math.max(hi, 0); }
  if (!isFinite(lo)) { lo = 0; hi = 1; }
  if (lo === hi) { lo -= 0.5; hi += 0.5; }
  if (key === "y") { var pad = 0.05 * (hi - lo); if (hi !== 0) hi += pad; if (lo !== 0) lo -= pad; } // headroom
  return [lo, hi];
}

export const plot2d = { ticks: ticks };

plot2d.create = function (canvas, opts) {
  var ctx = context2d(canvas);
  var p = { canvas: canvas, opts: opts, cursor: null, layout: null };
  function xsOf(s) {
    if (s.x) return s.x;
    if (!s._x || s._x.length !== s.y.length) { s._x = new Float64Array(s.y.length); for (var i = 0; i < s.y.length; i++) s._x[i] = i; }
    return s._x;
  }

  function computeLayout(W, H) {
    var o = p.opts, lanes = o.lanes;
    var top = (o.title ? 22 : 6) + (o.legend === false ? 0 : 18), left = 64, right = 12, bottom = 42, gap = 14;
    var xr = [o.x && o.x.min, o.x && o.x.max];
    if (xr[0] === undefined || xr[1] === undefined) {
      var lo = Infinity, hi = -Infinity;
      lanes.forEach(function (l) { var e = extent(l, "x", xsOf); lo = Math.min(lo, e[0]); hi = Math.max(hi, e[1]); });
      if (xr[0] === undefined) xr[0] = lo;
      if (xr[1] === undefined) xr[1] = hi;
    }
    var weights = lanes.map(function (l) { return l.height || 1; }), wsum = weights.reduce(function (a, b) { return a + b; }, 0);
    var avail = H - top - bottom - gap * (lanes.length - 1), y = top;
    var laneBoxes = lanes.map(function (l, i) {
      var h = (avail * weights[i]) / wsum, e = extent(l, "y", xsOf);
      var yr = [l.y && l.y.min !== undefined ? l.y.min : e[0], l.y && l.y.max !== undefined ? l.y.max : e[1]];
      var box = { x: left, y: y, width: W - left - right, height: h, yr: yr };
      y += h + gap;
      return box;
    });
    return { W: W, H: H, xr: xr, lanes: laneBoxes, left: left, right: right };
  }

  p.xToPx = function (x) { var L = p.layout; return L.left + ((x - L.xr[0]) / (L.xr[1] - L.xr[0])) * (L.W - L.left - L.right); };
  p.pxToX = function (px) { var L = p.layout; return L.xr[0] + ((px - L.left) / (L.W - L.left - L.right)) * (L.xr[1] - L.xr[0]); };
  function yToPx(box, v) { return box.y + box.height - ((v - box.yr[0]) / (box.yr[1] - box.yr[0])) * box.height; }

  function drawSeries(box, s, color) {
    var xs = xsOf(s), ys = s.y, n = ys.length;
    ctx.save();
    ctx.beginPath(); ctx.rect(box.x, box.y, box.width, box.height); ctx.clip();
    ctx.strokeStyle = color; ctx.fillStyle = color; ctx.lineWidth = s.width || 1.5;
    if (s.dash) ctx.setLineDash(s.dash);
    if (s.kind === "bar") {
      var step = n > 1 ? Math.abs(p.xToPx(xs[1]) - p.xToPx(xs[0])) : box.width, bw = Math.max(1, step * 0.8), y0 = yToPx(box, 0);
      for (var i = 0; i < n; i++) { var yy = yToPx(box, ys[i]); ctx.fillRect(p.xToPx(xs[i]) - bw / 2, Math.min(yy, y0), bw, Math.abs(y0 - yy)); }
    } else {
      ctx.beginPath();
      for (var j = 0; j < n; j++) {
        var px = p.xToPx(xs[j]), py = yToPx(box, ys[j]);
        if (j === 0) ctx.moveTo(px, py);
        else if (s.kind === "step") { ctx.lineTo(px, yToPx(box, ys[j - 1])); ctx.lineTo(px, py); }
        else ctx.lineTo(px, py);
      }
      if (s.kind === "area") {
        ctx.stroke();
        ctx.lineTo(p.xToPx(xs[n - 1]), yToPx(box, 0)); ctx.lineTo(p.xToPx(xs[0]), yToPx(box, 0)); ctx.closePath();
        ctx.globalAlpha = 0.25; ctx.fill();
      } else ctx.stroke();
    }
    ctx.restore();
  }

  p.draw = function () {
    var dpr = window.devicePixelRatio || 1, W = canvas.clientWidth || canvas.width, H = canvas.clientHeight || canvas.height;
    if (canvas.width !== Math.round(W * dpr) || canvas.height !== Math.round(H * dpr)) {
      canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, W, H);
    var o = p.opts, L = (p.layout = computeLayout(W, H));
    ctx.font = FONT; ctx.textBaseline = "middle";
    if (o.title) { ctx.font = BOLD; ctx.fillStyle = TEXT; ctx.textAlign = "left"; ctx.fillText(o.title, L.left, 11); ctx.font = FONT; }
    // legend: every named series once, in order
    if (o.legend !== false) {
      var seen = {}, lx = L.left, ly = (o.title ? 22 : 6) + 8, k = 0;
      o.lanes.forEach(function (l) { l.series.forEach(function (s) {
        var c = s.color || palette[k++ % palette.length]; s._color = c;
        if (!s.name || seen[s.name]) return; seen[s.name] = 1;
        ctx.fillStyle = c; ctx.fillRect(lx, ly - 4, 14, 8);
        ctx.fillStyle = TEXT; ctx.textAlign = "left"; ctx.fillText(s.name, lx + 18, ly);
        lx += 18 + ctx.measureText(s.name).width + 16;
      }); });
    } else {
      var kk = 0; o.lanes.forEach(function (l) { l.series.forEach(function (s) { s._color = s.color || palette[kk++ % palette.length]; }); });
    }
    var xt = ticks(L.xr[0], L.xr[1], Math.max(2, Math.floor((L.W - L.left - L.right) / 90)));
    L.lanes.forEach(function (box, i) {
      var lane = o.lanes[i], yt = ticks(box.yr[0], box.yr[1], Math.max(2, Math.floor(box.height / 40)));
      ctx.strokeStyle = GRID; ctx.lineWidth = 1;
      yt.forEach(function (t) { var y = Math.round(yToPx(box, t)) + 0.5; ctx.beginPath(); ctx.moveTo(box.x, y); ctx.lineTo(box.x + box.width, y); ctx.stroke(); });
      lane.series.forEach(function (s) { drawSeries(box, s, s._color); });
      ctx.strokeStyle = AXIS; ctx.strokeRect(box.x + 0.5, box.y + 0.5, box.width - 1, box.height - 1);
      ctx.fillStyle = AXIS; ctx.textAlign = "right";
      yt.forEach(function (t) { ctx.fillText(fmt(t, 3), box.x - 6, yToPx(box, t)); });
      // y axis title, rotated, centred on the lane
      ctx.save(); ctx.translate(14, box.y + box.height / 2); ctx.rotate(-Math.PI / 2);
      ctx.textAlign = "center"; ctx.fillStyle = TEXT; ctx.fillText(axisTitle(lane.y || {}), 0, 0); ctx.restore();
      if (lane.title) { ctx.textAlign = "left"; ctx.fillStyle = TEXT; ctx.fillText(lane.title, box.x + 6, box.y + 10); }
    });
    var last = L.lanes[L.lanes.length - 1], yb = last.y + last.height;
    ctx.textAlign = "center"; ctx.fillStyle = AXIS;
    xt.forEach(function (t) {
      var x = p.xToPx(t);
      ctx.beginPath(); ctx.moveTo(x, yb); ctx.lineTo(x, yb + 4); ctx.stroke();
      ctx.fillText(fmt(t, 4), x, yb + 13);
    });
    ctx.fillStyle = TEXT; ctx.fillText(axisTitle(o.x || {}), L.left + (L.W - L.left - L.right) / 2, yb + 31);
    if (p.cursor !== null && p.cursor >= L.xr[0] && p.cursor <= L.xr[1]) {
      var cx = Math.round(p.xToPx(p.cursor)) + 0.5;
      ctx.strokeStyle = "#000"; ctx.setLineDash([4, 3]); ctx.beginPath();
      ctx.moveTo(cx, L.lanes[0].y); ctx.lineTo(cx, yb); ctx.stroke(); ctx.setLineDash([]);
    }
    canvas.setAttribute("role", "img");
    canvas.setAttribute("aria-label", (o.title || "plot") + ": " + o.lanes.map(function (l) { return axisTitle(l.y || {}); }).join(", ") + " against " + axisTitle(o.x || {}));
    return p;
  };

  p.setCursor = function (x) { p.cursor = x; return p.draw(); };
  p.update = function (newOpts) { Object.assign(p.opts, newOpts); return p.draw(); };

  // (px, py) CSS pixels -> {lane, x, index, values: [{name, value}]} (nearest sample of each series), or null
  p.hitTest = function (px, py) {
    var L = p.layout; if (!L) return null;
    for (var i = 0; i < L.lanes.length; i++) {
      var b = L.lanes[i];
      if (px < b.x || px > b.x + b.width || py < b.y || py > b.y + b.height) continue;
      return p.valuesAt(p.pxToX(px), i);
    }
    return null;
  };
  p.valuesAt = function (x, laneIndex) {
    var lane = p.opts.lanes[laneIndex], res = { lane: laneIndex, x: x, index: -1, values: [] };
    lane.series.forEach(function (s) {
      var xs = xsOf(s), best = 0;
      for (var j = 1; j < xs.length; j++) if (Math.abs(xs[j] - x) < Math.abs(xs[best] - x)) best = j;
      res.index = best; res.x = xs[best];
      res.values.push({ name: s.name, value: s.y[best] });
    });
    return res;
  };
  return p;
};

// Hover: vertical cursor + tooltip with every series' value in the hovered lane; left/right arrow keys
// move the cursor by one sample when the canvas is focused. onMove(x) lets linked views follow.
plot2d.hover = function (p, onMove) {
  var c = p.canvas, xUnit = (p.opts.x && p.opts.x.unit) ? " " + p.opts.x.unit : "";
  if (!c.hasAttribute("tabindex")) c.tabIndex = 0;
  function text(h) {
    return (p.opts.x && p.opts.x.label ? p.opts.x.label : "x") + " = " + fmt(h.x, 6) + xUnit + "\n" +
      h.values.map(function (v) { return (v.name || "value") + ": " + fmt(v.value, 6); }).join("\n");
  }
  c.addEventListener("mousemove", function (e) {
    var r = c.getBoundingClientRect(), h = p.hitTest(e.clientX - r.left, e.clientY - r.top);
    if (!h) { tooltip.hide(); return; }
    p.setCursor(h.x); tooltip.show(text(h), e.clientX, e.clientY);
    if (onMove) onMove(h.x);
  });
  c.addEventListener("mouseleave", function () { tooltip.hide(); });
  var idx = 0;
  c.addEventListener("keydown", function (e) {
    if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
    e.preventDefault();
    var s = p.opts.lanes[0].series[0], n = s.y.length;
    idx = Math.max(0, Math.min(n - 1, idx + (e.key === "ArrowRight" ? 1 : -1) * (e.shiftKey ? 10 : 1)));
    var h = p.valuesAt((s.x ? s.x[idx] : idx), 0), r = c.getBoundingClientRect();
    p.setCursor(h.x); tooltip.show(text(h), r.left + p.xToPx(h.x), r.top + p.layout.lanes[0].y);
    if (onMove) onMove(h.x);
  });
  c.addEventListener("blur", function () { tooltip.hide(); });
};

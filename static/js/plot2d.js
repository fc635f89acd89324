/* plot2d.js: line / area / step / bar charts on a Canvas2D, with labelled axes, ticks, a legend,
 * several series per lane, lanes stacked on one shared x axis, and a vertical cursor.
 * Drawing is deterministic (no animation). Imports fmt, tooltip (core.js) and palette (colormaps.js).
 *
 *   var p = plot2d.create(canvas, {
 *     title: "Power", x: {label: "time", unit: "min"},
 *     lanes: [{title: "aggregate", y: {label: "power", unit: "W"},
 *              series: [{name: "input", y: Float32Array, kind: "line"}]}]});
 *   p.draw(); p.setCursor(42); plot2d.hover(p);
 * Lanes: {title, y: axis, series, height, flat: note when each series is constant, below0: note when one is < 0}.
 * Series: {name, y, x (optional; default 0..n-1), kind: line|area|step|bar, color, width, dash}.
 * Axes: {label, unit, min, max, zero, clock: {start: UTC ms at x = 0, per: ms per x unit} (ticks and readout in clock
 *   time, UTC), readout: the readout's name for x (default label)} (min/max default to the data range; y includes 0 for area/bar, and for any
 *   series with zero: true, so that a nearly constant lane is drawn near its zero line, not stretched edge to edge).
 */
import { palette } from "./colormaps.js";
import { context2d, fmt, font, tooltip } from "./core.js";

var FONT = font(12);
var BOLD = font(13, 600);
var AXIS = "#57606a", GRID = "#e6e9ed", TEXT = "#1b1f24";

// "nice" ticks (1, 2, 5 x 10^k) covering [min, max], about n of them, and never fewer than two (a short lane
// asked for 2 could get one step wider than its range: a lone "0")
function niceTicks(min, max, n) {
  var raw = (max - min) / Math.max(1, n), mag = Math.pow(10, Math.floor(Math.log10(raw)));
  var step = [1, 2, 5, 10].map(function (m) { return m * mag; }).find(function (s) { return s >= raw; });
  var out = [], t0 = Math.ceil(min / step - 1e-9) * step;
  for (var t = t0; t <= max + step * 1e-9; t += step) out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  return out;
}
function ticks(min, max, n) {
  if (!(max > min)) return [min];
  for (var k = Math.max(1, n || 5); k < (n || 5) + 8; k++) { var out = niceTicks(min, max, k); if (out.length >= 2) return out; }
  return [min, max];
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

// index of the sample of ascending xs nearest to x, or (floor) the last one at or before x (the first if none)
function sampleIndex(xs, x, floor) {
  var n = xs.length, lo = 0, hi = n - 1;
  if (n < 2 || x <= xs[0]) return 0;
  if (x >= xs[n - 1]) return n - 1;
  while (hi - lo > 1) { var mid = (lo + hi) >> 1; if (xs[mid] <= x) lo = mid; else hi = mid; }
  if (floor) return lo;
  return x - xs[lo] <= xs[hi] - x ? lo : hi;
}
// series s's value where it is drawn at x (see valuesAt)
function valueOf(s, xs, x) {
  if (s.y.length === 2 && s.kind === "line" && xs[1] !== xs[0]) {
    var u = Math.max(0, Math.min(1, (x - xs[0]) / (xs[1] - xs[0])));
    return s.y[0] + u * (s.y[1] - s.y[0]);
  }
  return s.y[sampleIndex(xs, x, s.kind === "step")];
}

// Clock axes (axis.clock = {start: UTC ms at x = 0, per: ms per x unit}): ticks on whole clock steps, "HH:MM" labels
var CLOCK_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440];   // minutes
function clockTicks(min, max, n, clock) {
  var t0 = clock.start + min * clock.per, t1 = clock.start + max * clock.per, span = (t1 - t0) / 60000;
  var step = CLOCK_STEPS.find(function (m) { return span / m <= Math.max(1, n); }) || 1440, ms = step * 60000, out = [];
  for (var t = Math.ceil(t0 / ms - 1e-9) * ms; t <= t1 + 1e-6; t += ms) out.push((t - clock.start) / clock.per);
  return out;
}
function clockText(clock, x, seconds) {
  var iso = new Date(clock.start + x * clock.per).toISOString();
  return iso.slice(11, seconds ? 19 : 16);
}
// the readout's x: clock time (with seconds when the samples are finer than a minute), else the number and unit
function xText(ax, x) {
  if (ax.clock) return clockText(ax.clock, x, ax.clock.per < 60000 || Math.round(x * ax.clock.per) % 60000 !== 0) + " UTC";
  return fmt(x, 6) + (ax.unit ? " " + ax.unit : "");
}
function xTicks(ax, xr, n) { return ax.clock ? clockTicks(xr[0], xr[1], n, ax.clock) : ticks(xr[0], xr[1], n); }
function xTickText(ax, t) {   // a clock tick at midnight names the day instead
  if (!ax.clock) return fmt(t, 4);
  var hm = clockText(ax.clock, t, false);
  return hm === "00:00" ? new Date(ax.clock.start + t * ax.clock.per).toISOString().slice(5, 10) : hm;
}

// Lane notes, in place. lane.flat: written after the lane's title when each series is constant (e.g. "off in this
// window"); lane.below0: why a series dips below 0, written once for the plot under its legend (headerLayout), so
// that no note covers a title or a trace.
function laneStats(lane) {
  var lo = Infinity, flat = true;
  lane.series.forEach(function (s) {
    var a = Infinity, b = -Infinity;
    for (var i = 0; i < s.y.length; i++) { var v = s.y[i]; if (v < a) a = v; if (v > b) b = v; }
    if (b - a > 1e-6 * Math.max(Math.abs(a), Math.abs(b)) + 1e-9) flat = false;
    lo = Math.min(lo, a);
  });
  return { lo: lo, flat: flat };
}
function flatNote(ctx, box, lane, labels) {
  if (!lane.flat || !laneStats(lane).flat) return;
  var x = box.x + 6 + (lane.title ? ctx.measureText(lane.title).width + 12 : 0), w = ctx.measureText(lane.flat).width;
  if (x + w > box.x + box.width - 6) return;
  ctx.save(); ctx.textAlign = "left"; ctx.fillStyle = AXIS; ctx.font = "italic " + FONT; put(ctx, labels, lane.flat, x, box.y + 10); ctx.restore();
}
function below0Lane(lanes) { return lanes.find(function (l) { return l.below0 && laneStats(l).lo < 0; }); }

// Draw text and record its box (CSS px, canvas space) in p.labels, so tests can check that no two labels overlap.
// rotated: drawn turned -90 degrees about (x, y). Uses the context's current align and baseline (top, middle or
// bottom / alphabetic); the box is the font's size high.
function put(ctx, labels, text, x, y, rotated) {
  var w = ctx.measureText(text).width, m = /(\d+(?:\.\d+)?)px/.exec(ctx.font), h = m ? Number(m[1]) : 12;
  var a = ctx.textAlign, x0 = a === "right" || a === "end" ? -w : a === "center" ? -w / 2 : 0;
  var b = ctx.textBaseline, yt = b === "top" || b === "hanging" ? 0 : b === "middle" ? -h / 2 : -h;
  if (rotated) { ctx.save(); ctx.translate(x, y); ctx.rotate(-Math.PI / 2); ctx.fillText(text, 0, 0); ctx.restore();
                 labels.push({ text: text, x0: x + yt, x1: x + yt + h, y0: y - x0 - w, y1: y - x0 }); return; }
  ctx.fillText(text, x, y);
  labels.push({ text: text, x0: x + x0, x1: x + x0 + w, y0: y + yt, y1: y + yt + h });
}
// A rotated y-axis title that fits its lane: the full title, else the label without its unit, else cut with "…".
function fitTitle(ctx, ax, room) {
  var t = axisTitle(ax);
  if (ctx.measureText(t).width <= room) return t;
  t = ax.label || "";
  while (t.length > 1 && ctx.measureText(t).width > room) t = t.slice(0, -2) + "…";
  return t;
}

// The block above the lanes, laid out to the plot's width: the title (cut with "…" if too long), the legend (every
// named series once, in order; its items wrap onto more rows) and the below-0 note (words wrap). -> {height, items}
// where items are {kind: title|legend|note, text, x, y, color}.
function headerLayout(ctx, o, x0, room) {
  var items = [], y = 6, ROW = 17, seen = {};
  if (o.title) { ctx.font = BOLD; items.push({ kind: "title", text: cut(ctx, o.title, room), x: x0, y: 11 }); ctx.font = FONT; y = 22; }
  if (o.legend !== false) {
    var lx = x0, ly = y + 8;
    o.lanes.forEach(function (l) { l.series.forEach(function (s) {
      if (!s.name || seen[s.name]) return; seen[s.name] = 1;
      var w = 18 + Math.min(ctx.measureText(s.name).width, room - 18);
      if (lx > x0 && lx + w > x0 + room) { lx = x0; ly += ROW; }
      items.push({ kind: "legend", text: cut(ctx, s.name, room - 18), x: lx, y: ly, series: s });
      lx += w + 16;
    }); });
    y = ly + 10;
  }
  var lane = below0Lane(o.lanes);
  if (lane) wrapWords(ctx, lane.below0, room).forEach(function (line) { items.push({ kind: "note", text: line, x: x0, y: y + 6 }); y += 15; });
  return { height: y, items: items };
}
function cut(ctx, text, room) {
  if (ctx.measureText(text).width <= room) return text;
  while (text.length > 1 && ctx.measureText(text + "…").width > room) text = text.slice(0, -1);
  return text + "…";
}
function wrapWords(ctx, text, room) {
  var lines = [], line = "";
  text.split(" ").forEach(function (w) {
    var t = line ? line + " " + w : w;
    if (line && ctx.measureText(t).width > room) { lines.push(line); line = w; } else line = t;
  });
  if (line) lines.push(line);
  return lines;
}

function drawHeader(ctx, items, labels) {
  ctx.textAlign = "left";
  items.forEach(function (it) {
    if (it.kind === "legend") { ctx.fillStyle = it.series._color; ctx.fillRect(it.x, it.y - 4, 14, 8); }
    ctx.font = it.kind === "title" ? BOLD : FONT; ctx.fillStyle = it.kind === "note" ? AXIS : TEXT;
    put(ctx, labels, it.text, it.kind === "legend" ? it.x + 18 : it.x, it.y);
  });
  ctx.font = FONT;
}

// shared with the charts drawn by hand (playground_plot.js): ticks, clock ticks, text drawn with its box recorded (put),
// words wrapped to a width (wrap)
export const plot2d = { ticks: ticks, clockTicks: clockTicks, clockText: function (clock, x) { return clockText(clock, x, false); },
                        put: put, wrap: wrapWords, chartOf: chartOf, labelsOf: labelsOf, recordText: recordText };

// The record of a hand-drawn figure's label boxes ({canvas, labels}: fill labels with put), made once per canvas and
// listed with plot2d's charts for the browser tests (nilmbuild.test.plots2d: no two boxes overlap, none is clipped).
function chartOf(canvas) {
  if (!canvas.nbChart) {
    canvas.nbChart = { canvas: canvas, labels: [] };
    var nb = window.nilmbuild;
    if (nb && nb.test) (nb.test.plots2d = nb.test.plots2d || []).push(canvas.nbChart);
  }
  return canvas.nbChart;
}
function labelsOf(canvas) { return (chartOf(canvas).labels = []); }   // a fresh list for a redraw of the whole canvas

// For figures drawn by hand with plain fillText (the encoder, attention and FiLM grids' axes): from this call on,
// every fillText on ctx is noted (text, place, font, align, baseline, transform) in a fresh list, and the canvas'
// chart labels are their boxes in CSS px of the canvas whatever the transform (a rotated title's too), measured
// only when read (the browser tests), so a redraw pays no measuring. Call it where the canvas is cleared for a
// whole redraw.
var scratch = null;
function recordText(ctx, canvas) {
  if (!ctx.nbFillText) {
    var fill = (ctx.nbFillText = ctx.fillText);
    ctx.fillText = function (text, x, y, maxWidth) {
      if (maxWidth === undefined) fill.call(ctx, text, x, y); else fill.call(ctx, text, x, y, maxWidth);
      if (ctx.nbTexts) ctx.nbTexts.push([String(text), x, y, ctx.font, ctx.textAlign, ctx.textBaseline, ctx.getTransform()]);
    };
  }
  var chart = chartOf(canvas), texts = (ctx.nbTexts = []);
  Object.defineProperty(chart, "labels", { configurable: true, enumerable: true,
    get: function () { return texts.map(function (t) { return textBox(canvas, t); }); } });
  return texts;
}
function textBox(canvas, t) {   // the axis-aligned box (CSS px) of a noted fillText
  scratch = scratch || document.createElement("canvas").getContext("2d");
  scratch.font = t[3];
  var w = scratch.measureText(t[0]).width, m = /(\d+(?:\.\d+)?)px/.exec(t[3]), h = m ? Number(m[1]) : 12;
  var a = t[4], b = t[5], k = canvas.clientWidth ? canvas.clientWidth / canvas.width : 1, tr = t[6];
  var x0 = t[1] + (a === "right" || a === "end" ? -w : a === "center" ? -w / 2 : 0), y0 = t[2] + (b === "top" || b === "hanging" ? 0 : b === "middle" ? -h / 2 : -h);
  var xs = [], ys = [];
  [[x0, y0], [x0 + w, y0], [x0, y0 + h], [x0 + w, y0 + h]].forEach(function (p) {
    xs.push((tr.a * p[0] + tr.c * p[1] + tr.e) * k); ys.push((tr.b * p[0] + tr.d * p[1] + tr.f) * k);
  });
  return { text: t[0], x0: Math.min.apply(null, xs), x1: Math.max.apply(null, xs), y0: Math.min.apply(null, ys), y1: Math.max.apply(null, ys) };
}

plot2d.create = function (canvas, opts) {
  var ctx = context2d(canvas);
  var p = { canvas: canvas, opts: opts, cursor: null, layout: null, labels: [] };
  var nb = window.nilmbuild;   // the browser tests read every chart's label boxes (tests/browser/test_readouts.py)
  if (nb && nb.test) (nb.test.plots2d = nb.test.plots2d || []).push(p);
  function xsOf(s) {
    if (s.x) return s.x;
    if (!s._x || s._x.length !== s.y.length) { s._x = new Float64Array(s.y.length); for (var i = 0; i < s.y.length; i++) s._x[i] = i; }
    return s._x;
  }

  function computeLayout(W, H) {
    var o = p.opts, lanes = o.lanes;
    var left = 64, right = 12, bottom = 42, gap = 14;
    ctx.font = FONT;
    var header = headerLayout(ctx, o, left, W - left - right), top = header.height;
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
    return { W: W, H: H, xr: xr, lanes: laneBoxes, left: left, right: right, header: header };
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
    var labels = (p.labels = []);
    var k = 0;
    o.lanes.forEach(function (l) { l.series.forEach(function (s) { s._color = s.color || palette[k++ % palette.length]; }); });
    drawHeader(ctx, L.header.items, labels);
    var xt = xTicks(o.x || {}, L.xr, Math.max(2, Math.floor((L.W - L.left - L.right) / 90)));
    L.lanes.forEach(function (box, i) {
      var lane = o.lanes[i], yt = ticks(box.yr[0], box.yr[1], Math.max(2, Math.floor(box.height / 40)));
      ctx.strokeStyle = GRID; ctx.lineWidth = 1;
      yt.forEach(function (t) { var y = Math.round(yToPx(box, t)) + 0.5; ctx.beginPath(); ctx.moveTo(box.x, y); ctx.lineTo(box.x + box.width, y); ctx.stroke(); });
      lane.series.forEach(function (s) { drawSeries(box, s, s._color); });
      ctx.strokeStyle = AXIS; ctx.strokeRect(box.x + 0.5, box.y + 0.5, box.width - 1, box.height - 1);
      ctx.fillStyle = AXIS; ctx.textAlign = "right";
      yt.forEach(function (t) { put(ctx, labels, fmt(t, 3), box.x - 6, yToPx(box, t)); });
      // y axis title, rotated, centred on the lane
      ctx.textAlign = "center"; ctx.fillStyle = TEXT;
      put(ctx, labels, fitTitle(ctx, lane.y || {}, box.height + 10), 14, box.y + box.height / 2, true);
      if (lane.title) { ctx.textAlign = "left"; ctx.fillStyle = TEXT; put(ctx, labels, cut(ctx, lane.title, box.width - 12), box.x + 6, box.y + 10); }
      flatNote(ctx, box, lane, labels);
    });
    var last = L.lanes[L.lanes.length - 1], yb = last.y + last.height;
    ctx.textAlign = "center"; ctx.fillStyle = AXIS;
    var prevRight = -Infinity;
    xt.forEach(function (t) {   // labels kept inside the canvas; one that would touch its left neighbour is left out
      var x = p.xToPx(t), label = xTickText(o.x || {}, t), w = ctx.measureText(label).width;
      var cx = Math.max(w / 2 + 1, Math.min(L.W - w / 2 - 1, x));
      ctx.beginPath(); ctx.moveTo(x, yb); ctx.lineTo(x, yb + 4); ctx.stroke();
      if (cx - w / 2 < prevRight + 4) return;
      put(ctx, labels, label, cx, yb + 13); prevRight = cx + w / 2;
    });
    var xt0 = cut(ctx, axisTitle(o.x || {}), L.W - 8), xw = ctx.measureText(xt0).width;
    ctx.fillStyle = TEXT; put(ctx, labels, xt0, Math.max(xw / 2 + 2, Math.min(L.W - xw / 2 - 2, L.left + (L.W - L.left - L.right) / 2)), yb + 31);
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
  // x -> the values drawn there: the lane's densest series picks the sample (its nearest one; a step series: the
  // step that covers x) and every series reports its own value at that sample's x (a two-point line, e.g. a
  // threshold, by interpolation). res.x is that sample's x, never another series' end point.
  function primary(lane) { var prim = null; lane.series.forEach(function (s) { if (!prim || s.y.length > prim.y.length) prim = s; }); return prim; }
  p.sampleXs = function (laneIndex) { var s = primary(p.opts.lanes[laneIndex]); return s ? xsOf(s) : []; };
  p.valuesAt = function (x, laneIndex) {
    var lane = p.opts.lanes[laneIndex], res = { lane: laneIndex, x: x, index: -1, values: [] }, prim = primary(lane);
    if (!prim || !prim.y.length) return res;
    var pxs = xsOf(prim);
    res.index = sampleIndex(pxs, x, prim.kind === "step"); res.x = pxs[res.index];
    lane.series.forEach(function (s) { res.values.push({ name: s.name, value: valueOf(s, xsOf(s), res.x) }); });
    return res;
  };
  return p;
};

// Hover: vertical cursor + tooltip with every series' value in the hovered lane; left/right arrow keys
// move the cursor by one sample when the canvas is focused. onMove(x) lets linked views follow. The tooltip is
// rebuilt from the plot's current series whenever a control changes them (core.tooltip's refresh).
plot2d.hover = function (p, onMove) {
  var c = p.canvas, last = null;   // last: where the readout points, {px, py} (mouse) or {x} (keyboard, lane 0)
  if (!c.hasAttribute("tabindex")) c.tabIndex = 0;
  function text(h) {
    var ax = p.opts.x || {};
    return (ax.readout || ax.label || "x") + " = " + xText(ax, h.x) + "\n" +
      h.values.map(function (v) { return (v.name || "value") + ": " + fmt(v.value, 6); }).join("\n");
  }
  function show() {
    var r = c.getBoundingClientRect(), h = last.px !== undefined ? p.hitTest(last.px, last.py) : p.valuesAt(last.x, 0);
    if (!h) { tooltip.hide(); return null; }
    var px = last.px !== undefined ? last.px : p.xToPx(h.x), py = last.px !== undefined ? last.py : p.layout.lanes[0].y;
    tooltip.show(text(h), r.left + px, r.top + py, function () { if (last) show(); });
    return h;
  }
  c.addEventListener("mousemove", function (e) {
    var r = c.getBoundingClientRect();
    last = { px: e.clientX - r.left, py: e.clientY - r.top };
    var h = p.hitTest(last.px, last.py);
    if (!h) { last = null; tooltip.hide(); return; }
    p.setCursor(h.x); show();
    if (onMove) onMove(h.x);
  });
  function away() { last = null; tooltip.hide(); }
  c.addEventListener("mouseleave", away);
  c.addEventListener("blur", away);
  c.addEventListener("keydown", function (e) {
    if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
    e.preventDefault();
    var xs = p.sampleXs(0), at = p.cursor === null ? 0 : p.valuesAt(p.cursor, 0).index;
    var idx = Math.max(0, Math.min(xs.length - 1, at + (e.key === "ArrowRight" ? 1 : -1) * (e.shiftKey ? 10 : 1)));
    last = { x: xs[idx] };
    p.setCursor(xs[idx]); show();
    if (onMove) onMove(xs[idx]);
  });
};

/* disaggregation_lanes.js: stacked power lanes on one time axis (Canvas 2D), with the "split" animation:
 * at split = 0 the device areas are stacked inside the aggregate lane (same watt scale), at split = 1 each
 * sits in its own lane with its own scale; in between the polygons move and rescale (smoothstep easing).
 *
 *   var v = lanes.create(canvas, {agg: Float32Array, aggName, devices: [{name, pred, truth, color, marks}],
 *                                    clock (time_axis.js windowClock: step 0's UTC time, ms per step), xLabel,
 *                                    seams: [idx], centres: [[a, b]], valid});
 *   v.draw(split); v.hit(px, py) -> {lane, index} ; v.setCursor(index)
 */
import { FONT_FAMILY, context2d, fmt } from "./core.js";
import { plot2d } from "./plot2d.js";
import { stepTicks } from "./time_axis.js";

export const lanes = {};
var FONT = FONT_FAMILY;
var AXIS = "#57606a", GRID = "#eaeef2", TEXT = "#1b1f24";

function maxOf(a) { var m = 0; for (var i = 0; i < a.length; i++) if (a[i] > m) m = a[i]; return m; }
// tick / readout labels: whole watts from 100 W up (no exponent form), else 3 significant digits
lanes.fmtTick = function (t) { return Math.abs(t) >= 100 ? String(Math.round(t)) : fmt(t, 3); };
function ease(t) { return t * t * (3 - 2 * t); }

lanes.create = function (canvas, o) {
  var ctx = context2d(canvas), v = { canvas: canvas, opts: o, cursor: null, lane: 0, L: null };

  // the legend's items, wrapped into rows that fit the width, and the x axis label's lines (a phone: more of each)
  function legendRows(W) {
    var x0 = W < 600 ? 6 : 70, lx = x0, ly = 11, out = [];   // a phone: rows from the left edge, over the y ticks
    ctx.font = "12px " + FONT;
    [["prediction (area)", "#0072B2", false], ["ground truth", "#1b1f24", true], ["sum of predictions (top lane)", "#0072B2", "dot"]].concat(o.legendExtra || []).forEach(function (it) {
      var w = 18 + ctx.measureText(it[0]).width;
      if (lx > x0 && lx + w > W - 4) { lx = x0; ly += 16; }
      out.push({ it: it, x: lx, y: ly }); lx += w + 12;
    });
    return out;
  }
  function layout(W, H) {
    var legend = legendRows(W), xLines = plot2d.wrap(ctx, o.xLabel, W - 8);
    var left = 70, right = 14, top = legend[legend.length - 1].y + 15, bottom = 26 + 14 * xLines.length, gap = 10, n = o.devices.length;
    var aggH = (H - top - bottom - gap * n) * 0.28, devH = (H - top - bottom - gap * n - aggH) / n;
    var boxes = [{ x: left, y: top, w: W - left - right, h: aggH }];
    for (var i = 0; i < n; i++) boxes.push({ x: left, y: top + aggH + gap + i * (devH + gap), w: W - left - right, h: devH });
    var sum = new Float64Array(o.agg.length);
    o.devices.forEach(function (d) { for (var i = 0; i < sum.length; i++) sum[i] += Math.max(0, d.pred[i]); });
    v.sum = sum;
    var aggMax = Math.max(1, maxOf(o.agg), maxOf(sum)) * 1.08;
    var maxes = [aggMax].concat(o.devices.map(function (d) { return Math.max(1, maxOf(d.pred), d.truth ? maxOf(d.truth) : 0, d.before ? maxOf(d.before) : 0) * 1.12; }));
    return { W: W, H: H, boxes: boxes, maxes: maxes, n: o.agg.length, legend: legend, xLines: xLines };
  }
  function xpx(i) { var b = v.L.boxes[0]; return b.x + (i / Math.max(1, v.L.n - 1)) * b.w; }
  function ypx(k, w) { var b = v.L.boxes[k]; return b.y + b.h - (w / v.L.maxes[k]) * b.h; }
  function niceTicks(max, n) { return plot2d ? plot2d.ticks(0, max, n) : [0, max]; }

  v.draw = function (split) {
    split = split === undefined ? 1 : split;
    var e = ease(Math.max(0, Math.min(1, split)));
    var dpr = window.devicePixelRatio || 1, W = canvas.clientWidth, H = canvas.clientHeight;
    if (canvas.width !== Math.round(W * dpr) || canvas.height !== Math.round(H * dpr)) { canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr); }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, W, H);
    var L = (v.L = layout(W, H)), n = L.n, labels = plot2d.labelsOf(canvas);   // every text's box, for the overlap tests
    ctx.font = "12px " + FONT; ctx.textBaseline = "middle";
    // centre shading + seams (day view)
    if (o.centres) {
      o.centres.forEach(function (c, k) {
        if (k % 2) return;
        ctx.fillStyle = "rgba(86,180,233,0.08)";
        ctx.fillRect(xpx(c[0]), L.boxes[0].y, xpx(Math.min(n - 1, c[1])) - xpx(c[0]), L.boxes[L.boxes.length - 1].y + L.boxes[L.boxes.length - 1].h - L.boxes[0].y);
      });
    }
    if (o.invalid) { // bins without data
      ctx.fillStyle = "rgba(140,149,159,0.25)";
      for (var q = 0; q < n; q++) if (!o.valid[q]) ctx.fillRect(xpx(q) - 0.5, L.boxes[0].y, Math.max(1, xpx(q + 1) - xpx(q)), L.boxes[L.boxes.length - 1].y + L.boxes[L.boxes.length - 1].h - L.boxes[0].y);
    }
    // lanes: grid, ticks, titles
    L.boxes.forEach(function (b, k) {
      var ticks = niceTicks(L.maxes[k], Math.max(2, Math.floor(b.h / 28)));
      ctx.strokeStyle = GRID; ctx.lineWidth = 1;
      ticks.forEach(function (t) { var y = Math.round(ypx(k, t)) + 0.5; ctx.beginPath(); ctx.moveTo(b.x, y); ctx.lineTo(b.x + b.w, y); ctx.stroke();
        ctx.fillStyle = AXIS; ctx.textAlign = "right"; plot2d.put(ctx, labels, lanes.fmtTick(t), b.x - 6, y); });
      ctx.strokeStyle = "#d0d7de"; ctx.strokeRect(b.x + 0.5, b.y + 0.5, b.w - 1, b.h - 1);
    });
    if (o.seams) {
      ctx.save(); ctx.strokeStyle = "rgba(27,31,36,0.35)"; ctx.setLineDash([3, 3]);
      o.seams.forEach(function (s) { var x = Math.round(xpx(s)) + 0.5; ctx.beginPath(); ctx.moveTo(x, L.boxes[0].y); ctx.lineTo(x, L.boxes[L.boxes.length - 1].y + L.boxes[L.boxes.length - 1].h); ctx.stroke(); });
      ctx.restore();
    }
    // aggregate
    var b0 = L.boxes[0];
    ctx.save(); ctx.beginPath(); ctx.rect(b0.x, b0.y, b0.w, b0.h); ctx.clip();
    path(function (i) { return ypx(0, o.agg[i]); }); ctx.strokeStyle = "#1b1f24"; ctx.lineWidth = 1.2; ctx.stroke();
    if (e >= 1) { path(function (i) { return ypx(0, v.sum[i]); }); ctx.strokeStyle = "#0072B2"; ctx.setLineDash([2, 2]); ctx.lineWidth = 1.2; ctx.stroke(); ctx.setLineDash([]); }
    ctx.restore();
    // device areas, moving from the stack (e = 0) to their lanes (e = 1)
    var cum = new Float64Array(n);
    o.devices.forEach(function (d, k) {
      var bk = L.boxes[k + 1], lo = new Float64Array(n), hi = new Float64Array(n);
      for (var i = 0; i < n; i++) {
        var p = Math.max(0, d.pred[i]);
        var sLo = ypx(0, cum[i]), sHi = ypx(0, cum[i] + p), oLo = ypx(k + 1, 0), oHi = ypx(k + 1, p);
        lo[i] = sLo + (oLo - sLo) * e; hi[i] = sHi + (oHi - sHi) * e; cum[i] += p;
      }
      ctx.save();
      if (e >= 1) { ctx.beginPath(); ctx.rect(bk.x, bk.y, bk.w, bk.h); ctx.clip(); }
      ctx.beginPath();
      for (var j = 0; j < n; j++) { if (j === 0) ctx.moveTo(xpx(j), hi[j]); else ctx.lineTo(xpx(j), hi[j]); }
      for (var m = n - 1; m >= 0; m--) ctx.lineTo(xpx(m), lo[m]);
      ctx.closePath(); ctx.globalAlpha = 0.35; ctx.fillStyle = d.color; ctx.fill(); ctx.globalAlpha = 1;
      ctx.beginPath();
      for (var j2 = 0; j2 < n; j2++) { if (j2 === 0) ctx.moveTo(xpx(j2), hi[j2]); else ctx.lineTo(xpx(j2), hi[j2]); }
      ctx.strokeStyle = d.color; ctx.lineWidth = 1.4; ctx.stroke();
      ctx.restore();
      if (e >= 1) {
        ctx.save(); ctx.beginPath(); ctx.rect(bk.x, bk.y, bk.w, bk.h); ctx.clip();
        if (d.truth) { path(function (i) { return ypx(k + 1, d.truth[i]); }); ctx.strokeStyle = "#1b1f24"; ctx.setLineDash([4, 2]); ctx.lineWidth = 1; ctx.stroke(); ctx.setLineDash([]); }
        if (d.before) { path(function (i) { return ypx(k + 1, d.before[i]); }); ctx.strokeStyle = "#6e7781"; ctx.setLineDash([2, 2]); ctx.lineWidth = 1; ctx.stroke(); ctx.setLineDash([]); }
        if (d.marks) { // samples zeroed by the selected post-processing step
          ctx.fillStyle = "#D55E00";
          for (var t = 0; t < n; t++) if (d.marks[t]) ctx.fillRect(xpx(t) - 0.5, bk.y + bk.h - 5, Math.max(1.5, xpx(t + 1) - xpx(t)), 5);
        }
        ctx.restore();
      }
    });
    // titles (on top of the data)
    L.boxes.forEach(function (b, k) {
      var title = k === 0 ? o.aggName : o.devices[k - 1].name.replace("_", " ");
      ctx.font = "600 12px " + FONT; ctx.textAlign = "left";
      var w = ctx.measureText(title).width;
      ctx.fillStyle = "rgba(255,255,255,0.85)"; ctx.fillRect(b.x + 3, b.y + 3, w + 8, 16);
      ctx.fillStyle = k === 0 ? TEXT : o.devices[k - 1].color; plot2d.put(ctx, labels, title, b.x + 7, b.y + 11);
      ctx.font = "12px " + FONT;
    });
    // y title
    ctx.textAlign = "center"; ctx.fillStyle = TEXT;
    plot2d.put(ctx, labels, "power (W), each lane its own scale", 14, (L.boxes[0].y + L.boxes[L.boxes.length - 1].y + L.boxes[L.boxes.length - 1].h) / 2, true);
    // x axis
    var last = L.boxes[L.boxes.length - 1], yb = last.y + last.h;
    ctx.fillStyle = AXIS; ctx.textAlign = "center"; ctx.strokeStyle = AXIS;
    v.xTicks = stepTicks(o.clock, 0, n - 1, Math.floor(b0.w / 90));
    v.xTicks.forEach(function (tk) {   // clock time (UTC)
      var x = xpx(tk.step), hw = ctx.measureText(tk.label).width / 2;
      ctx.beginPath(); ctx.moveTo(x, yb); ctx.lineTo(x, yb + 4); ctx.stroke(); plot2d.put(ctx, labels, tk.label, Math.max(hw + 1, Math.min(W - hw - 1, x)), yb + 13);
    });
    ctx.fillStyle = TEXT;
    L.xLines.forEach(function (line, k) {   // centred under the lanes, kept inside the canvas
      var hw = ctx.measureText(line).width / 2;
      plot2d.put(ctx, labels, line, Math.max(hw + 2, Math.min(W - hw - 2, b0.x + b0.w / 2)), yb + 30 + 14 * k);
    });
    // legend
    ctx.textAlign = "left"; ctx.font = "12px " + FONT;
    L.legend.forEach(function (r) {
      var it = r.it, lx = r.x, ly = r.y;
      ctx.strokeStyle = it[1]; ctx.fillStyle = it[1]; ctx.lineWidth = 1.5;
      if (it[2] === "box") ctx.fillRect(lx, ly - 3, 14, 6);
      else { ctx.setLineDash(it[2] === "dot" ? [2, 2] : it[2] ? [4, 2] : []); ctx.beginPath(); ctx.moveTo(lx, ly); ctx.lineTo(lx + 14, ly); ctx.stroke(); ctx.setLineDash([]); }
      ctx.fillStyle = TEXT; plot2d.put(ctx, labels, it[0], lx + 18, ly);
    });
    // cursor
    if (v.cursor !== null && e >= 1) {
      var cx = Math.round(xpx(v.cursor)) + 0.5; ctx.strokeStyle = "#000"; ctx.setLineDash([4, 3]); ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(cx, b0.y); ctx.lineTo(cx, yb); ctx.stroke(); ctx.setLineDash([]);
      var bl = L.boxes[v.lane]; ctx.strokeStyle = "#bf8700"; ctx.lineWidth = 2; ctx.strokeRect(bl.x + 1, bl.y + 1, bl.w - 2, bl.h - 2);
    }
    return v;
  };
  function path(yf) {
    ctx.beginPath();
    for (var i = 0; i < v.L.n; i++) { if (i === 0) ctx.moveTo(xpx(i), yf(i)); else ctx.lineTo(xpx(i), yf(i)); }
  }
  v.hit = function (px, py) {
    if (!v.L) return null;
    for (var k = 0; k < v.L.boxes.length; k++) {
      var b = v.L.boxes[k];
      if (px >= b.x && px <= b.x + b.w && py >= b.y && py <= b.y + b.h) {
        return { lane: k, index: Math.max(0, Math.min(v.L.n - 1, Math.round(((px - b.x) / b.w) * (v.L.n - 1)))) };
      }
    }
    return null;
  };
  v.cellCenter = function (lane, index) { var b = v.L.boxes[lane]; return { x: xpx(index), y: b.y + b.h / 2 }; };
  return v;
};

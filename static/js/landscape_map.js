/* landscape_map.js: the loss landscape stored in the checkpoint by `nilmbuild landscape` (extra["landscape"]).
 * landscapeMap.create(canvas, overlay, L) draws log10(loss) on the (alpha, beta) plane as a height map with contours
 * (pixel by pixel on a 2D canvas: a few ms for its ~10^5 pixels, where a WebGL context costs 100-300 ms of the
 * page's load in software GL), and on a 2D overlay the axes, the checkpoint (centre), the grid minimum and the
 * training trajectory projected onto the plane (one point per epoch). Returns
 * {draw, toPixel(alpha, beta) -> {x, y} CSS px, valueAt(px, py) -> {alpha, beta, loss} | null}.
 */
import { colormaps } from "./colormaps.js";
import { context2d, fmt, font, onResize } from "./core.js";
import { fitCanvas } from "./grid.js";
import { plot2d } from "./plot2d.js";
var PAD = { l: 64, t: 16, r: 16, b: 52 }, LEVELS = 14;

function box(canvas) {
  var W = canvas.clientWidth, H = canvas.clientHeight, s = Math.min(W - PAD.l - PAD.r, H - PAD.t - PAD.b);
  return { x: PAD.l, y: PAD.t, width: s, height: s };
}

function range(L) {
  var lo = Infinity, hi = -Infinity;
  L.loss.forEach(function (row) { row.forEach(function (v) { var g = Math.log10(v); lo = Math.min(lo, g); hi = Math.max(hi, g); }); });
  return { lo: lo, hi: hi > lo ? hi : lo + 1e-6 };
}

function heights(L) {        // row i = beta index, column j = alpha index; values log10(loss)
  var n = L.grid, d = new Float32Array(n * n);
  for (var i = 0; i < n; i++) for (var j = 0; j < n; j++) d[i * n + j] = Math.log10(L.loss[i][j]);
  return d;
}

// t = (log10 loss - lo) / (hi - lo) along one row of the grid, py (beta, grid-index units), at the w + 1 points
// px = (x + 0.5) / w * (n - 1), x = 0 .. w (a pixel's centre, and its right neighbour's): bilinear between the 4
// grid points around each
function rowValues(d, n, R, py, w, out) {
  var iy = Math.min(Math.max(Math.floor(py), 0), n - 2), fy = Math.min(Math.max(py - iy, 0), 1);
  var span = Math.max(R.hi - R.lo, 1e-9);
  for (var x = 0; x <= w; x++) {
    var px = ((x + 0.5) / w) * (n - 1), jx = Math.min(Math.max(Math.floor(px), 0), n - 2);
    var fx = Math.min(Math.max(px - jx, 0), 1), o = iy * n + jx;
    var low = d[o] * (1 - fx) + d[o + 1] * fx, high = d[o + n] * (1 - fx) + d[o + n + 1] * fx;
    out[x] = (low * (1 - fy) + high * fy - R.lo) / span;
  }
}

function smoothstep(e0, e1, x) { var t = Math.min(Math.max((x - e0) / (e1 - e0), 0), 1); return t * t * (3 - 2 * t); }

// one pixel row's RGBA from its values t and the row above's: the colormap over [lo, hi], lightened toward white
// by up to 0.55 on a contour line (every 1/LEVELS of the range, ~1 px wide from the level's change to the pixel
// on the right and the one above)
function shadeRow(t, above, w, lut, out, o) {
  for (var x = 0; x < w; x++, o += 4) {
    var lev = t[x] * LEVELS, k = 4 * Math.round(Math.min(Math.max(t[x], 0), 1) * 255);
    var gx = Math.abs(t[x + 1] * LEVELS - lev), gy = Math.abs(above[x] * LEVELS - lev);
    var g = Math.max(Math.sqrt(gx * gx + gy * gy), 1e-6), f = lev + 0.5 - Math.floor(lev + 0.5);
    var mixW = 0.55 * (1 - smoothstep(0.5, 1.2, Math.abs(f - 0.5) / g));
    for (var c = 0; c < 3; c++) out[o + c] = Math.round(((lut[k + c] / 255) * (1 - mixW) + mixW) * 255);
    out[o + 3] = 255;
  }
}

// the height map in a w x h pixel box: pixel (x, y)'s centre is grid point ((x + 0.5) / w, 1 - (y + 0.5) / h) * (n - 1);
// each row of values is computed once (a pixel row's, then the one below's "above")
function heightMap(d, n, R, w, h) {
  var img = new ImageData(w, h), lut = colormaps.lut("viridis"), row = new Float64Array(w + 1), above = new Float64Array(w + 1);
  rowValues(d, n, R, (1 + 0.5 / h) * (n - 1), w, above);   // the row above pixel row 0
  for (var y = 0; y < h; y++) {
    rowValues(d, n, R, (1 - (y + 0.5) / h) * (n - 1), w, row);
    shadeRow(row, above, w, lut, img.data, 4 * y * w);
    var swap = above; above = row; row = swap;
  }
  return img;
}

function marker(g, p, kind, colour) {
  g.strokeStyle = colour; g.fillStyle = colour; g.lineWidth = 2;
  if (kind === "x") {
    g.beginPath(); g.moveTo(p.x - 6, p.y - 6); g.lineTo(p.x + 6, p.y + 6); g.moveTo(p.x + 6, p.y - 6); g.lineTo(p.x - 6, p.y + 6); g.stroke();
  } else {
    g.beginPath(); g.arc(p.x, p.y, 6, 0, 2 * Math.PI); g.stroke();
  }
}

function axes(g, b, L) {
  g.font = font(12); g.fillStyle = "#1b1f24"; g.strokeStyle = "#57606a"; g.lineWidth = 1;
  var ticks = plot2d.ticks(-L.span, L.span, 5);
  g.textAlign = "center"; g.textBaseline = "top";
  ticks.forEach(function (t) {
    var x = b.x + ((t + L.span) / (2 * L.span)) * b.width;
    g.beginPath(); g.moveTo(x, b.y + b.height); g.lineTo(x, b.y + b.height + 4); g.stroke(); g.fillText(fmt(t, 3), x, b.y + b.height + 6);
  });
  g.fillText("α: steps along direction 1 (1 = each filter moved by its own norm)", b.x + b.width / 2, b.y + b.height + 24);
  g.textAlign = "right"; g.textBaseline = "middle";
  ticks.forEach(function (t) {
    var y = b.y + (1 - (t + L.span) / (2 * L.span)) * b.height;
    g.beginPath(); g.moveTo(b.x - 4, y); g.lineTo(b.x, y); g.stroke(); g.fillText(fmt(t, 3), b.x - 6, y);
  });
  g.save(); g.translate(14, b.y + b.height / 2); g.rotate(-Math.PI / 2); g.textAlign = "center";
  g.fillText("β: steps along direction 2", 0, 0); g.restore();
}

function trajectory(g, pts, toPixel, b) {
  if (!pts.length) return 0;
  var outside = 0;
  g.save(); g.beginPath(); g.rect(b.x, b.y, b.width, b.height); g.clip();
  g.strokeStyle = "#D55E00"; g.lineWidth = 2; g.beginPath();
  pts.forEach(function (p, k) { var q = toPixel(p.alpha, p.beta); if (k) g.lineTo(q.x, q.y); else g.moveTo(q.x, q.y); });
  g.stroke();
  pts.forEach(function (p, k) {
    var q = toPixel(p.alpha, p.beta);
    if (q.x < b.x || q.x > b.x + b.width || q.y < b.y || q.y > b.y + b.height) outside++;
    g.fillStyle = "#D55E00"; g.beginPath(); g.arc(q.x, q.y, 3, 0, 2 * Math.PI); g.fill();
    if (k === 0 || k === pts.length - 1) {
      // a white halo under dark text: readable on the dark (low-loss) end of viridis as on the bright end
      g.font = font(11, 600); g.textAlign = "left"; g.textBaseline = "bottom"; g.lineJoin = "round";
      g.strokeStyle = "rgba(255,255,255,0.92)"; g.lineWidth = 3.5; g.strokeText("epoch " + p.epoch, q.x + 5, q.y - 3);
      g.fillStyle = "#1b1f24"; g.fillText("epoch " + p.epoch, q.x + 5, q.y - 3);
    }
  });
  g.restore();
  return outside;
}

export const landscapeMap = {
  create: function (canvas, overlay, L) {
    fitCanvas(canvas);
    var n = L.grid, R = range(L), B = box(canvas), d = heights(L);
    function toPixel(a, b) {
      return { x: B.x + ((a + L.span) / (2 * L.span)) * B.width, y: B.y + (1 - (b + L.span) / (2 * L.span)) * B.height };
    }
    function draw() {
      fitCanvas(canvas); B = box(canvas);
      var g0 = context2d(canvas), sx = canvas.width / canvas.clientWidth, sy = canvas.height / canvas.clientHeight;
      var x0 = Math.round(B.x * sx), y0 = Math.round(B.y * sy), w = Math.round(B.width * sx), h = Math.round(B.height * sy);
      g0.setTransform(1, 0, 0, 1, 0, 0); g0.fillStyle = "#fff"; g0.fillRect(0, 0, canvas.width, canvas.height);
      if (w > 0 && h > 0) g0.putImageData(heightMap(d, n, R, w, h), x0, y0);
      var dpr = window.devicePixelRatio || 1;
      overlay.style.width = canvas.clientWidth + "px"; overlay.style.height = canvas.clientHeight + "px";
      overlay.width = Math.round(canvas.clientWidth * dpr); overlay.height = Math.round(canvas.clientHeight * dpr);
      var g = context2d(overlay);
      g.setTransform(dpr, 0, 0, dpr, 0, 0); g.clearRect(0, 0, canvas.clientWidth, canvas.clientHeight);
      axes(g, B, L);
      api.outside = trajectory(g, L.trajectory || [], toPixel, B);
      marker(g, toPixel(L.min.alpha, L.min.beta), "x", "#ffffff");
      marker(g, toPixel(0, 0), "o", "#ffffff");
    }
    function valueAt(px, py) {
      if (px < B.x || py < B.y || px >= B.x + B.width || py >= B.y + B.height) return null;
      var j = Math.round(((px - B.x) / B.width) * (n - 1)), i = Math.round((1 - (py - B.y) / B.height) * (n - 1));
      return { alpha: L.alpha[j], beta: L.beta[i], loss: L.loss[i][j], i: i, j: j };
    }
    var api = { draw: draw, toPixel: toPixel, valueAt: valueAt, range: R, outside: 0 };
    draw();
    onResize(canvas, draw);
    return api;
  },
};

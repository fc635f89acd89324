/* heatmap2d.js: a rows x cols value grid drawn on a 2D canvas through a colormap, with gl.heatmap's interface
 * (rows, cols, box, draw(box), update, setRange, value, cellAt, cellBox), so gl.hover works on it unchanged.
 *   var hm = heatmap2d(canvas, {data, rows, cols, vmin, vmax, cmap, nanColor [r,g,b,a] 0..1}); clear2d(canvas); hm.draw();
 * For a view whose WebGL context would serve this one grid (the training page's PCGrad matrix, FiLM's γ/β and
 * embeddings, the forward page's zoom): creating a context costs 100-300 ms in software GL, drawing a box of pixels
 * here a few ms (one JS pass over the box). Each pixel is the one gl.heatmap draws: the colour
 * colormaps.map(cmap, (v - vmin) / (vmax - vmin)) (nanColor for NaN) of the cell under its centre. */
import { colormaps } from "./colormaps.js";
import { context2d } from "./core.js";
import { gl } from "./gl.js";

// each cell's colour as RGBA bytes (state.rgba, rows x cols x 4): colormaps.map's rule, nanColor for NaN
function paint(state) {
  var n = state.rows * state.cols, lut = colormaps.lut(state.cmap), nan = state.nanColor;
  var span = Math.max(state.vmax - state.vmin, 1e-30), px = state.rgba = new Uint8ClampedArray(4 * n);
  for (var i = 0; i < n; i++) {
    var v = state.data[i], o = 4 * i;
    if (v !== v) { px[o] = Math.round(nan[0] * 255); px[o + 1] = Math.round(nan[1] * 255); px[o + 2] = Math.round(nan[2] * 255); }
    else {
      var k = Math.round(Math.max(0, Math.min(1, (v - state.vmin) / span)) * 255) * 4;
      px[o] = lut[k]; px[o + 1] = lut[k + 1]; px[o + 2] = lut[k + 2];
    }
    px[o + 3] = 255;
  }
  state.dirty = false;
}

// the cell of each of n pixels across a span of `cells` cells: the one under the pixel's centre (heatmap.frag's
// nearest texel)
function cellIndex(n, cells) {
  var out = new Int32Array(n);
  for (var i = 0; i < n; i++) out[i] = Math.min(cells - 1, Math.floor(((i + 0.5) / n) * cells));
  return out;
}

// the grid at the box's backing-store pixels (x0, y0, w x h), pixel by pixel as gl.heatmap draws it
function image(state, w, h) {
  var img = new ImageData(w, h), px = img.data, cols = cellIndex(w, state.cols), rows = cellIndex(h, state.rows);
  for (var y = 0; y < h; y++) {
    var rowOff = rows[y] * state.cols;
    for (var x = 0; x < w; x++) {
      var o = 4 * (y * w + x), c = 4 * (rowOff + cols[x]);
      px[o] = state.rgba[c]; px[o + 1] = state.rgba[c + 1]; px[o + 2] = state.rgba[c + 2]; px[o + 3] = 255;
    }
  }
  return img;
}

// the whole canvas white (backing-store pixels), before its heatmaps are drawn: what regl.clear does for gl.heatmap
export function clear2d(canvas) {
  var g = context2d(canvas);
  g.setTransform(1, 0, 0, 1, 0, 0); g.fillStyle = "#fff"; g.fillRect(0, 0, canvas.width, canvas.height);
}

export function heatmap2d(canvas, opts) {
  var state = { rows: opts.rows, cols: opts.cols, data: opts.data, vmin: opts.vmin, vmax: opts.vmax,
                cmap: opts.cmap || "viridis", nanColor: opts.nanColor || [0.8, 0.8, 0.8, 1], box: null, rgba: null, dirty: true };
  if (state.data.length !== state.rows * state.cols) {
    throw new Error("heatmap2d: data has " + state.data.length + " values, expected rows*cols = " + state.rows * state.cols);
  }
  var cells = gl.gridCells(state);
  return {
    rows: state.rows, cols: state.cols,
    get box() { return state.box; },
    // box in CSS pixels (default: whole canvas). Does not clear.
    draw: function (box) {
      box = box || { x: 0, y: 0, width: canvas.clientWidth || canvas.width, height: canvas.clientHeight || canvas.height };
      state.box = box;
      if (state.dirty) paint(state);
      var g = context2d(canvas), sx = canvas.width / (canvas.clientWidth || canvas.width);
      var sy = canvas.height / (canvas.clientHeight || canvas.height);
      var x0 = Math.round(box.x * sx), x1 = Math.round((box.x + box.width) * sx);
      var y0 = Math.round(box.y * sy), y1 = Math.round((box.y + box.height) * sy);
      if (x1 > x0 && y1 > y0) g.putImageData(image(state, x1 - x0, y1 - y0), x0, y0);
    },
    update: function (data, vmin, vmax) {
      if (data.length !== state.rows * state.cols) throw new Error("heatmap2d.update: wrong data length");
      state.data = data;
      if (vmin !== undefined) state.vmin = vmin;
      if (vmax !== undefined) state.vmax = vmax;
      state.dirty = true;
    },
    setRange: function (vmin, vmax) { state.vmin = vmin; state.vmax = vmax; state.dirty = true; },
    get vmin() { return state.vmin; }, get vmax() { return state.vmax; }, get cmap() { return state.cmap; },
    value: function (row, col) { return state.data[row * state.cols + col]; },
    cellAt: cells.cellAt,
    cellBox: cells.cellBox,
  };
}

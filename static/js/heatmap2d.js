/* heatmap2d.js: a rows x cols value grid drawn on a 2D canvas through a colormap: every value grid of the site (the
 * encoder's strips, the embedding's maps, the FiLM grids, the PCGrad and head-ablation matrices, the forward zoom).
 *   var hm = heatmap2d(canvas, {data, rows, cols, vmin, vmax, cmap, nanColor [r,g,b,a] 0..1}); clear2d(canvas); hm.draw(box);
 *   hm.rows, hm.cols, hm.box, hm.update(data, vmin?, vmax?), hm.setRange(vmin, vmax), hm.value(r, c), hm.cellAt,
 *   hm.cellBox (grid.js: hoverGrid works on it).
 * Each backing-store pixel of the box is the colour colormaps.map(cmap, (v - vmin) / (vmax - vmin)) (nanColor for
 * NaN) of the cell under the pixel's centre (what a GPU's nearest-texel lookup draws). A redraw is a few ms of JS;
 * a WebGL context would cost 100-300 ms of a page's load in software GL. */
import { colormaps } from "./colormaps.js";
import { context2d } from "./core.js";
import { gridCells } from "./grid.js";

// colormaps.lut(cmap) as one opaque RGBA word per index (bytes in ImageData order), the NaN colour at index 256
function palette(cmap, nan) {
  var lut = colormaps.lut(cmap), bytes = new Uint8Array(4 * 257);
  for (var k = 0; k < 256; k++) { bytes.set(lut.subarray(4 * k, 4 * k + 3), 4 * k); bytes[4 * k + 3] = 255; }
  bytes.set([Math.round(nan[0] * 255), Math.round(nan[1] * 255), Math.round(nan[2] * 255), 255], 4 * 256);
  return new Uint32Array(bytes.buffer);
}

// cell row r's colours into state.rgba (one word per cell): colormaps.map's rule, the NaN colour for NaN
function paintRow(state, r) {
  var cols = state.cols, o = r * cols, d = state.data, px = state.rgba, pal = state.palette, lo = state.vmin;
  var span = Math.max(state.vmax - state.vmin, 1e-30);
  for (var c = 0; c < cols; c++) {
    var v = d[o + c];
    px[o + c] = v !== v ? pal[256] : pal[Math.round(Math.max(0, Math.min(1, (v - lo) / span)) * 255)];
  }
  state.painted[r] = 1;
}

// the cell of each of n pixels across a span of `cells` cells: the one under the pixel's centre (a GPU's nearest
// texel)
function cellIndex(n, cells) {
  var out = new Int32Array(n);
  for (var i = 0; i < n; i++) out[i] = Math.min(cells - 1, Math.floor(((i + 0.5) / n) * cells));
  return out;
}

// the grid at the box's backing-store pixels (x0, y0, w x h), pixel by pixel: each pixel
// a copy of its cell's colour word, a pixel row under the same cell row as the row above a copy of that row, and
// only the cell rows some pixel shows painted (a tall grid in a short box: a fraction of them)
function image(state, w, h) {
  var c = sized(state, w, h), px = c.px, rgba = state.rgba, cols = c.cols, rows = c.rows;
  for (var y = 0; y < h; y++) {
    var o = y * w, r = rows[y];
    if (y > 0 && r === rows[y - 1]) { px.copyWithin(o, o - w, o); continue; }
    if (!state.painted[r]) paintRow(state, r);
    var rowOff = r * state.cols;
    for (var x = 0; x < w; x++) px[o + x] = rgba[rowOff + cols[x]];
  }
  return c.img;
}

// the ImageData and the pixel -> cell maps of a w x h box, made again only when the box's size changes
function sized(state, w, h) {
  var c = state.sized;
  if (c && c.img.width === w && c.img.height === h) return c;
  var img = new ImageData(w, h);
  state.sized = { img: img, px: new Uint32Array(img.data.buffer), cols: cellIndex(w, state.cols), rows: cellIndex(h, state.rows) };
  return state.sized;
}

// the whole canvas white (backing-store pixels), before its heatmaps are drawn
export function clear2d(canvas) {
  var g = context2d(canvas);
  g.setTransform(1, 0, 0, 1, 0, 0); g.fillStyle = "#fff"; g.fillRect(0, 0, canvas.width, canvas.height);
}

export function heatmap2d(canvas, opts) {
  var cmap = opts.cmap || "viridis", n = opts.rows * opts.cols;
  var state = { rows: opts.rows, cols: opts.cols, data: opts.data, vmin: opts.vmin, vmax: opts.vmax, cmap: cmap,
                palette: palette(cmap, opts.nanColor || [0.8, 0.8, 0.8, 1]), box: null, sized: null,
                rgba: new Uint32Array(n), painted: new Uint8Array(opts.rows) };  // painted[r]: row r's colours are current
  if (state.data.length !== state.rows * state.cols) {
    throw new Error("heatmap2d: data has " + state.data.length + " values, expected rows*cols = " + state.rows * state.cols);
  }
  var cells = gridCells(state);
  return {
    rows: state.rows, cols: state.cols,
    get box() { return state.box; },
    // box in CSS pixels (default: whole canvas). Does not clear.
    draw: function (box) {
      box = box || { x: 0, y: 0, width: canvas.clientWidth || canvas.width, height: canvas.clientHeight || canvas.height };
      state.box = box;
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
      state.painted.fill(0);
    },
    setRange: function (vmin, vmax) { state.vmin = vmin; state.vmax = vmax; state.painted.fill(0); },
    get vmin() { return state.vmin; }, get vmax() { return state.vmax; }, get cmap() { return state.cmap; },
    value: function (row, col) { return state.data[row * state.cols + col]; },
    cellAt: cells.cellAt,
    cellBox: cells.cellBox,
  };
}

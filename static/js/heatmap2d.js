/* heatmap2d.js: a small rows x cols value grid drawn on a 2D canvas through a colormap, with gl.heatmap's interface
 * (rows, cols, box, draw(box), update, setRange, value, cellAt, cellBox), so gl.hover works on it unchanged.
 *   var hm = heatmap2d(canvas, {data, rows, cols, vmin, vmax, cmap, nanColor [r,g,b,a] 0..1}); hm.draw();
 * For grids of a few cells (the training page's device x device PCGrad matrix), where creating a WebGL context
 * (100-300 ms in software GL) costs far more than the drawing. Each cell is the colour gl.heatmap draws for its
 * value: colormaps.map(cmap, (v - vmin) / (vmax - vmin)), nanColor for NaN. */
import { colormaps } from "./colormaps.js";
import { context2d } from "./core.js";
import { gl } from "./gl.js";

function cellColour(state, v) {
  if (v !== v) {
    var n = state.nanColor;
    return "rgb(" + Math.round(n[0] * 255) + "," + Math.round(n[1] * 255) + "," + Math.round(n[2] * 255) + ")";
  }
  return colormaps.css(state.cmap, (v - state.vmin) / Math.max(state.vmax - state.vmin, 1e-30));
}

// box (CSS pixels, default the whole canvas) -> cell edges in backing-store pixels, so neighbours share an edge
function edges(canvas, box, n, along) {
  var scale = along === "x" ? canvas.width / (canvas.clientWidth || canvas.width) : canvas.height / (canvas.clientHeight || canvas.height);
  var start = along === "x" ? box.x : box.y, size = along === "x" ? box.width : box.height, out = [];
  for (var i = 0; i <= n; i++) out.push(Math.round((start + size * i / n) * scale));
  return out;
}

export function heatmap2d(canvas, opts) {
  var state = { rows: opts.rows, cols: opts.cols, data: opts.data, vmin: opts.vmin, vmax: opts.vmax,
                cmap: opts.cmap || "viridis", nanColor: opts.nanColor || [0.8, 0.8, 0.8, 1], box: null };
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
      var g = context2d(canvas), xs = edges(canvas, box, state.cols, "x"), ys = edges(canvas, box, state.rows, "y");
      g.setTransform(1, 0, 0, 1, 0, 0);
      for (var r = 0; r < state.rows; r++) for (var c = 0; c < state.cols; c++) {
        g.fillStyle = cellColour(state, state.data[r * state.cols + c]);
        g.fillRect(xs[c], ys[r], xs[c + 1] - xs[c], ys[r + 1] - ys[r]);
      }
    },
    update: function (data, vmin, vmax) {
      if (data.length !== state.rows * state.cols) throw new Error("heatmap2d.update: wrong data length");
      state.data = data;
      if (vmin !== undefined) state.vmin = vmin;
      if (vmax !== undefined) state.vmax = vmax;
    },
    setRange: function (vmin, vmax) { state.vmin = vmin; state.vmax = vmax; },
    get vmin() { return state.vmin; }, get vmax() { return state.vmax; }, get cmap() { return state.cmap; },
    value: function (row, col) { return state.data[row * state.cols + col]; },
    cellAt: cells.cellAt,
    cellBox: cells.cellBox,
  };
}

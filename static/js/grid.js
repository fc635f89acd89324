/* grid.js: what a value-grid view needs besides drawing it; no WebGL here, so a page whose grids are all 2D
 * (heatmap2d.js) bundles no regl.
 * fitCanvas(canvas)        backing store = CSS size x devicePixelRatio; true if it changed (kept while the canvas
 *                          is not laid out); 2D and WebGL canvases alike
 * gridCells(state)         cellAt / cellBox of a grid drawn in a box (heatmap2d's)
 * hoverGrid(canvas, heatmaps, opts)  tooltip on hover + arrow-key cursor with a cell outline, over heatmap2d grids
 *                          or any object with their rows, cols, box, value, cellAt, cellBox (the attention heads)
 * Boxes are {x, y, width, height} in CSS pixels from the canvas' top-left corner.
 */
import { fmt, gridCursor, tooltip } from "./core.js";

export function fitCanvas(canvas) {
  // a canvas that is not laid out (display: none, e.g. a view hidden by a switch) keeps its backing store: its
  // pixels stay (preserveDrawingBuffer) and showing it again reallocates nothing (a toggle cost ~50 ms a frame)
  if (!canvas.clientWidth || !canvas.clientHeight) return false;
  var dpr = window.devicePixelRatio || 1;
  var w = Math.round(canvas.clientWidth * dpr), h = Math.round(canvas.clientHeight * dpr);
  if (canvas.width === w && canvas.height === h) return false;
  canvas.width = w; canvas.height = h;
  return true;
}

// The cells of a rows x cols grid of values last drawn in state.box (CSS pixels from the canvas' top-left; state:
// {rows, cols, data, box}): cellAt(px, py) -> {row, col, value} or null outside the box, cellBox(row, col) -> its
// CSS-pixel rectangle (for overlays).
export function gridCells(state) {
  return {
    cellAt: function (px, py) {
      var b = state.box;
      if (!b || px < b.x || py < b.y || px >= b.x + b.width || py >= b.y + b.height) return null;
      var col = Math.min(state.cols - 1, Math.floor(((px - b.x) / b.width) * state.cols));
      var row = Math.min(state.rows - 1, Math.floor(((py - b.y) / b.height) * state.rows));
      return { row: row, col: col, value: state.data[row * state.cols + col] };
    },
    cellBox: function (row, col) {
      var b = state.box, w = b.width / state.cols, h = b.height / state.rows;
      return { x: b.x + col * w, y: b.y + row * h, width: w, height: h };
    },
  };
}

// Hover tooltips and a keyboard cursor for one or more heatmaps drawn on `canvas`.
// opts.label(hm, row, col, value, index) -> text (default "row r, col c: value");
// opts.onCell(hm, row, col) called on hover/keyboard moves (e.g. to update linked views).
// The arrow-key cursor works on the first heatmap (opts.keyboardIndex to pick another).
export function hoverGrid(canvas, heatmaps, opts) {
  opts = opts || {};
  var label = opts.label || function (hm, r, c, v) { return "row " + r + ", col " + c + ": " + fmt(v, 6); };
  var parent = canvas.parentElement;
  if (getComputedStyle(parent).position === "static") parent.style.position = "relative";
  var outline = document.createElement("div");
  outline.className = "nb-cell-cursor";
  outline.hidden = true;
  parent.appendChild(outline);

  var last = null;   // what the readout shows: {px, py} (pointer, canvas CSS px) or {r, c} (keyboard cursor)
  function show(hm, idx, r, c, clientX, clientY) {
    var b = hm.cellBox(r, c), cr = canvas.getBoundingClientRect(), pr = parent.getBoundingClientRect();
    outline.style.left = cr.left - pr.left + b.x + "px"; outline.style.top = cr.top - pr.top + b.y + "px";
    outline.style.width = b.width + "px"; outline.style.height = b.height + "px";
    outline.hidden = false;
    if (clientX === undefined) { clientX = cr.left + b.x + b.width; clientY = cr.top + b.y + b.height; }
    tooltip.show(label(hm, r, c, hm.value(r, c), idx), clientX, clientY, refresh);
    if (opts.onCell) opts.onCell(hm, r, c);
  }
  function pointAt(px, py) {   // the pointer's cell, re-read from the grids as they are drawn now
    var rect = canvas.getBoundingClientRect();
    for (var i = 0; i < heatmaps.length; i++) {
      var cell = heatmaps[i].cellAt(px, py);
      if (!cell) continue;
      if (cursor && heatmaps[i].rows === khm.rows) cursor.row = cell.row;   // arrow keys go on from here
      if (cursor && heatmaps[i].cols === khm.cols) cursor.col = cell.col;
      show(heatmaps[i], i, cell.row, cell.col, rect.left + px, rect.top + py);
      return;
    }
    away();
  }
  function refresh() {
    if (!last) return;
    if (last.px !== undefined) pointAt(last.px, last.py);
    else if (khm.box) show(khm, k, last.r, last.c);
  }
  function away() { last = null; outline.hidden = true; tooltip.hide(); }
  canvas.addEventListener("mousemove", function (e) {
    var rect = canvas.getBoundingClientRect();
    last = { px: e.clientX - rect.left, py: e.clientY - rect.top };
    pointAt(last.px, last.py);
  });
  canvas.addEventListener("mouseleave", away);
  var k = opts.keyboardIndex || 0, khm = heatmaps[k], cursor = null;
  cursor = gridCursor(canvas, khm.rows, khm.cols, function (r, c) { if (khm.box) { last = { r: r, c: c }; show(khm, k, r, c); } },
                      opts.ariaLabel || "heatmap");
  canvas.addEventListener("blur", away);
  return cursor;
}

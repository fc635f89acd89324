/* gl.js: WebGL via regl (npm, bundled), colormaps.js and the shaders heatmap.vert/.frag (static/glsl).
 * gl.create(canvas)                -> regl (preserveDrawingBuffer, no antialias) or null after fail()
 * gl.fitCanvas(canvas)             backing store = CSS size x devicePixelRatio; true if it changed (kept while
 *                                  the canvas is not laid out)
 * gl.heatmap(regl, opts)           a rows x cols value grid drawn through a colormap LUT
 * gl.grid(n, cols, w, h, gap)      boxes for small multiples in one canvas
 * gl.hover(canvas, heatmaps, opts) tooltip on hover + arrow-key cursor with a cell outline (gl.heatmap's or
 *                                  heatmap2d.js's)
 * gl.gridCells(state)              cellAt / cellBox of a grid drawn in a box
 * Boxes are {x, y, width, height} in CSS pixels from the canvas' top-left corner.
 */
import createREGL from "regl/dist/regl.min.js";

import heatmapFrag from "../glsl/heatmap.frag";
import heatmapVert from "../glsl/heatmap.vert";
import { colormaps } from "./colormaps.js";
import { fail, fmt, gridCursor, tooltip } from "./core.js";

export const gl = {};

gl.create = function (canvas, extra) {
  var error = null, regl = null;
  try {
    regl = createREGL(Object.assign({
      canvas: canvas,
      attributes: { preserveDrawingBuffer: true, antialias: false, alpha: false, premultipliedAlpha: false },
      optionalExtensions: ["OES_texture_float"],
      onDone: function (err, r) { error = err; regl = r; },
    }, extra || {}));
  } catch (e) {
    error = e;
  }
  if (error || !regl) {
    fail(new Error("WebGL is not available in this browser: " + (error && error.message ? error.message : error || "no context") +
      ". Try another browser, or enable hardware acceleration."));
    return null;
  }
  canvas.addEventListener("webglcontextlost", function (e) {
    e.preventDefault();
    fail(new Error("the WebGL context was lost (GPU reset or too many tabs); reload the page"));
  });
  return regl;
};

gl.fitCanvas = function (canvas) {
  // a canvas that is not laid out (display: none, e.g. a view hidden by a switch) keeps its backing store: its
  // pixels stay (preserveDrawingBuffer) and showing it again reallocates nothing (a toggle cost ~50 ms a frame)
  if (!canvas.clientWidth || !canvas.clientHeight) return false;
  var dpr = window.devicePixelRatio || 1;
  var w = Math.round(canvas.clientWidth * dpr), h = Math.round(canvas.clientHeight * dpr);
  if (canvas.width === w && canvas.height === h) return false;
  canvas.width = w; canvas.height = h;
  return true;
};

// n boxes in a grid of `cols` columns filling w x h CSS pixels, `gap` pixels apart, row-major.
gl.grid = function (n, cols, w, h, gap) {
  gap = gap || 0;
  var rows = Math.ceil(n / cols), bw = (w - gap * (cols - 1)) / cols, bh = (h - gap * (rows - 1)) / rows, out = [];
  for (var i = 0; i < n; i++) {
    out.push({ x: (i % cols) * (bw + gap), y: Math.floor(i / cols) * (bh + gap), width: bw, height: bh });
  }
  return out;
};

var cmdCache = typeof WeakMap !== "undefined" ? new WeakMap() : null;
function drawCommand(regl) {
  var cmd = cmdCache && cmdCache.get(regl);
  if (cmd) return cmd;
  cmd = regl({
    vert: heatmapVert,
    frag: heatmapFrag,
    attributes: { position: [-1, -1, 1, -1, -1, 1, -1, 1, 1, -1, 1, 1] },
    count: 6,
    uniforms: {
      values: regl.prop("values"), lut: regl.prop("lut"),
      vmin: regl.prop("vmin"), vmax: regl.prop("vmax"),
      prenormalised: regl.prop("prenormalised"), nanColor: regl.prop("nanColor"),
    },
    viewport: regl.prop("viewport"),
    scissor: { enable: true, box: regl.prop("viewport") },
    depth: { enable: false },
  });
  if (cmdCache) cmdCache.set(regl, cmd);
  return cmd;
}

// opts: {data: Float32Array (row-major, rows*cols), rows, cols, vmin, vmax, cmap ("viridis"),
//        canvas (default regl's), nanColor [r,g,b,a] 0..1, forceUint8 (test the fallback)}
gl.heatmap = function (regl, opts) {
  var canvas = opts.canvas || regl._gl.canvas;
  var useFloat = regl.hasExtension("oes_texture_float") && !opts.forceUint8;
  var state = {
    rows: opts.rows, cols: opts.cols, data: opts.data,
    vmin: opts.vmin, vmax: opts.vmax, cmap: opts.cmap || "viridis",
    box: null,
  };
  if (state.data.length !== state.rows * state.cols) {
    throw new Error("heatmap: data has " + state.data.length + " values, expected rows*cols = " + state.rows * state.cols);
  }
  var values = regl.texture({ width: 1, height: 1 });
  var lut = regl.texture({ width: 256, height: 1, data: colormaps.lut(state.cmap), min: "nearest", mag: "nearest" });

  function upload() {
    var d = state.data, tex;
    if (useFloat) {
      tex = { width: state.cols, height: state.rows, data: d instanceof Float32Array ? d : new Float32Array(d),
              format: "luminance", type: "float" };
    } else { // 8-bit fallback: normalise on the CPU with the same rounding as the LUT index
      var u8 = new Uint8Array(d.length), span = state.vmax - state.vmin || 1e-30;
      for (var i = 0; i < d.length; i++) {
        var t = (d[i] - state.vmin) / span;
        u8[i] = t !== t ? 0 : Math.round(Math.max(0, Math.min(1, t)) * 255);
      }
      tex = { width: state.cols, height: state.rows, data: u8, format: "luminance", type: "uint8" };
    }
    tex.min = "nearest"; tex.mag = "nearest"; tex.wrapS = "clamp"; tex.wrapT = "clamp";
    values(tex);
  }
  upload();

  var cells = gl.gridCells(state);
  var hm = {
    rows: state.rows, cols: state.cols,
    get box() { return state.box; },
    // box in CSS pixels (default: whole canvas). Does not clear: call regl.clear first once per frame.
    draw: function (box) {
      box = box || { x: 0, y: 0, width: canvas.clientWidth || canvas.width, height: canvas.clientHeight || canvas.height };
      state.box = box;
      var sx = canvas.width / (canvas.clientWidth || canvas.width), sy = canvas.height / (canvas.clientHeight || canvas.height);
      var x0 = Math.round(box.x * sx), x1 = Math.round((box.x + box.width) * sx);
      var y0 = Math.round(box.y * sy), y1 = Math.round((box.y + box.height) * sy);
      var vp = { x: x0, y: canvas.height - y1, width: x1 - x0, height: y1 - y0 };
      drawCommand(regl)({ values: values, lut: lut, vmin: state.vmin, vmax: state.vmax, prenormalised: !useFloat,
                          nanColor: opts.nanColor || [0.8, 0.8, 0.8, 1], viewport: vp });
    },
    update: function (data, vmin, vmax) {
      if (data.length !== state.rows * state.cols) throw new Error("heatmap.update: wrong data length");
      state.data = data;
      if (vmin !== undefined) state.vmin = vmin;
      if (vmax !== undefined) state.vmax = vmax;
      upload();
    },
    setRange: function (vmin, vmax) { state.vmin = vmin; state.vmax = vmax; if (!useFloat) upload(); },
    setColormap: function (name) { state.cmap = name; lut({ width: 256, height: 1, data: colormaps.lut(name), min: "nearest", mag: "nearest" }); },
    get vmin() { return state.vmin; }, get vmax() { return state.vmax; }, get cmap() { return state.cmap; },
    get floatTexture() { return useFloat; },
    value: function (row, col) { return state.data[row * state.cols + col]; },
    cellAt: cells.cellAt,
    cellBox: cells.cellBox,
    destroy: function () { values.destroy(); lut.destroy(); },
  };
  return hm;
};

// The cells of a rows x cols grid of values last drawn in state.box (CSS pixels from the canvas' top-left; state:
// {rows, cols, data, box}): cellAt(px, py) -> {row, col, value} or null outside the box, cellBox(row, col) -> its
// CSS-pixel rectangle (for overlays). Shared by gl.heatmap and heatmap2d.js.
gl.gridCells = function (state) {
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
};

// Hover tooltips and a keyboard cursor for one or more heatmaps drawn on `canvas`.
// opts.label(hm, row, col, value, index) -> text (default "row r, col c: value");
// opts.onCell(hm, row, col) called on hover/keyboard moves (e.g. to update linked views).
// The arrow-key cursor works on the first heatmap (opts.keyboardIndex to pick another).
gl.hover = function (canvas, heatmaps, opts) {
  opts = opts || {};
  var label = opts.label || function (hm, r, c, v) { return "row " + r + ", col " + c + ": " + fmt(v, 6); };
  var parent = canvas.parentElement;
  if (getComputedStyle(parent).position === "static") parent.style.position = "relative";
  var outline = document.createElement("div");
  outline.className = "nb-cell-cursor";
  outline.hidden = true;
  parent.appendChild(outline);

  function show(hm, idx, r, c, clientX, clientY) {
    var b = hm.cellBox(r, c), cr = canvas.getBoundingClientRect(), pr = parent.getBoundingClientRect();
    outline.style.left = cr.left - pr.left + b.x + "px"; outline.style.top = cr.top - pr.top + b.y + "px";
    outline.style.width = b.width + "px"; outline.style.height = b.height + "px";
    outline.hidden = false;
    if (clientX === undefined) { clientX = cr.left + b.x + b.width; clientY = cr.top + b.y + b.height; }
    tooltip.show(label(hm, r, c, hm.value(r, c), idx), clientX, clientY);
    if (opts.onCell) opts.onCell(hm, r, c);
  }
  canvas.addEventListener("mousemove", function (e) {
    var rect = canvas.getBoundingClientRect(), px = e.clientX - rect.left, py = e.clientY - rect.top;
    for (var i = 0; i < heatmaps.length; i++) {
      var cell = heatmaps[i].cellAt(px, py);
      if (cell) { show(heatmaps[i], i, cell.row, cell.col, e.clientX, e.clientY); return; }
    }
    outline.hidden = true; tooltip.hide();
  });
  canvas.addEventListener("mouseleave", function () { outline.hidden = true; tooltip.hide(); });
  var k = opts.keyboardIndex || 0, khm = heatmaps[k];
  var cursor = gridCursor(canvas, khm.rows, khm.cols, function (r, c) { if (khm.box) show(khm, k, r, c); },
                             opts.ariaLabel || "heatmap");
  canvas.addEventListener("blur", function () { outline.hidden = true; tooltip.hide(); });
  return cursor;
};

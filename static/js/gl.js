/* gl.js: WebGL via regl (npm, bundled), colormaps.js and the shaders heatmap.vert/.frag (static/glsl).
 * gl.create(canvas)                -> regl (preserveDrawingBuffer, no antialias) or null after fail()
 * gl.heatmap(regl, opts)           a rows x cols value grid drawn through a colormap LUT
 * Boxes are {x, y, width, height} in CSS pixels from the canvas' top-left corner; fitting a canvas, a grid's
 * cells and hovering them are grid.js's (shared with the 2D heatmaps of heatmap2d.js).
 */
import createREGL from "regl/dist/regl.min.js";

import heatmapFrag from "../glsl/heatmap.frag";
import heatmapVert from "../glsl/heatmap.vert";
import { colormaps } from "./colormaps.js";
import { fail } from "./core.js";
import { gridCells } from "./grid.js";

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

  var cells = gridCells(state);
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


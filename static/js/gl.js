/* gl.js: WebGL contexts via regl (npm, bundled), for the views that need a GPU: the attention page's maps, which
 * rebuild every weight from q, k in a shader, and the forward page's 3D blocks and animation. Value grids are drawn
 * on 2D canvases instead (heatmap2d.js): a WebGL context costs 100-300 ms of a page load in software GL.
 * gl.open(canvas)            create the canvas's WebGL context now, in a task of its own, and nothing else: the GPU
 *                               process goes on setting it up while the page does other work, so the synchronous
 *                               calls of gl.create later (regl's limit probes) do not wait for it (no-op on failure:
 *                               gl.create reports it)
 * gl.create(canvas, extra?)  -> regl (preserveDrawingBuffer, no antialias) or null after fail(); extra: more
 *                               createREGL options, e.g. gl.FLOAT_TEXTURES; uses the context gl.open made, if any
 * gl.warm()                 -> Promise, resolved once gl_warm.js's worker (started in the page's <head>) has made a
 *                               WebGL context of its own, or failed to: a page's first context costs 50-500 ms of
 *                               software-GL start-up in one synchronous call, which the worker pays off the main thread;
 *                               gl.open afterwards takes ~10-30 ms. Await it just before gl.open.
 * gl.FLOAT_TEXTURES          ask for OES_texture_float (regl then probes float read-back: a synchronous read of
 *                               the GPU, ~20-50 ms in software GL, so only views that upload float textures ask)
 */
import createREGL from "regl/dist/regl.min.js";

import { fail } from "./core.js";

export const gl = {};

gl.FLOAT_TEXTURES = { optionalExtensions: ["OES_texture_float"] };

var ATTRIBUTES = { preserveDrawingBuffer: true, antialias: false, alpha: false, premultipliedAlpha: false };

// gl_warm.js's worker (inlined in the page's <head>), or nothing to wait for on a page without it
gl.warm = function () { return window.nilmbuildGLWarm || Promise.resolve(false); };

gl.open = function (canvas) {
  try { canvas.getContext("webgl", ATTRIBUTES); } catch (e) { /* gl.create reports it */ }
};

gl.create = function (canvas, extra) {
  var error = null, regl = null;
  try {
    regl = createREGL(Object.assign({
      canvas: canvas,   // regl asks for "webgl" with the same attributes: gl.open's context, if it made one
      attributes: ATTRIBUTES,
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

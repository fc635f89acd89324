/* gl.js: WebGL contexts via regl (npm, bundled), for the views that need a GPU: the attention page's maps, which
 * rebuild every weight from q, k in a shader, and the forward page's 3D blocks and animation. Value grids are drawn
 * on 2D canvases instead (heatmap2d.js): a WebGL context costs 100-300 ms of a page load in software GL.
 * gl.create(canvas, extra?)  -> regl (preserveDrawingBuffer, no antialias) or null after fail(); extra: more
 *                               createREGL options, e.g. gl.FLOAT_TEXTURES
 * gl.FLOAT_TEXTURES          ask for OES_texture_float (regl then probes float read-back: a synchronous read of
 *                               the GPU, ~20-50 ms in software GL, so only views that upload float textures ask)
 */
import createREGL from "regl/dist/regl.min.js";

import { fail } from "./core.js";

export const gl = {};

gl.FLOAT_TEXTURES = { optionalExtensions: ["OES_texture_float"] };

gl.create = function (canvas, extra) {
  var error = null, regl = null;
  try {
    regl = createREGL(Object.assign({
      canvas: canvas,
      attributes: { preserveDrawingBuffer: true, antialias: false, alpha: false, premultipliedAlpha: false },
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

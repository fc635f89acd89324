/* attention_layers.js: one head's (query x key) weights in every encoder layer side by side (encoder-film.md 6.10:
 * local vs global attention across depth). Its own regl context on `canvas`; each map is rebuilt in
 * attention_weights.frag from the captured q, k and lse of that layer (log10 colour scale, 1e-4 .. 1), once per
 * (layer, head, sample) and size: tex_cache.js keeps the drawn maps.
 * attentionLayers.create(canvas, overlay, cap, {layers, weights, head, sample, later?}) -> {draw(head, sample), boxes()}
 * (nothing is drawn until the first draw());
 * weights: the attention-weights record of each layer (names from the view).
 */
import attWeightsFrag from "../glsl/attention_weights.frag";
import attWeightsVert from "../glsl/attention_weights.vert";
import { colormaps } from "./colormaps.js";
import { context2d, font, onResize, sizeBacking } from "./core.js";
import { gl } from "./gl.js";
import { fitCanvas } from "./grid.js";
import { texCache } from "./tex_cache.js";
import { plot2d } from "./plot2d.js";
var LOG_MIN = -4, LOG_MAX = 0, PAD = { l: 40, t: 22, b: 34, gap: 22 };

// (H, L, E) q or k of one sample -> RGBA float texture rows t, texels h * T4 + d / 4 (as the shader reads them)
function packQK(a, H, L, E) {
  var T4 = Math.ceil(E / 4), TW = H * T4, data = new Float32Array(L * TW * 4);
  for (var h = 0; h < H; h++) for (var t = 0; t < L; t++) for (var d = 0; d < E; d++) data[(t * TW + h * T4) * 4 + d] = a[(h * L + t) * E + d];
  return { data: data, width: TW, T4: T4 };
}

function boxes(canvas, n) {
  var W = canvas.clientWidth, H = canvas.clientHeight;
  var s = Math.floor(Math.min(H - PAD.t - PAD.b, (W - PAD.l - (n - 1) * PAD.gap - 8) / n)), out = [];
  for (var i = 0; i < n; i++) out.push({ x: PAD.l + i * (s + PAD.gap), y: PAD.t, width: s, height: s });
  return out;
}

function labels(overlay, canvas, B, L, head) {
  var dpr = window.devicePixelRatio || 1, W = canvas.clientWidth, H = canvas.clientHeight;
  overlay.style.width = W + "px"; overlay.style.height = H + "px";
  sizeBacking(overlay, Math.round(W * dpr), Math.round(H * dpr));
  var g = context2d(overlay);
  g.setTransform(dpr, 0, 0, dpr, 0, 0); g.clearRect(0, 0, W, H);
  plot2d.recordText(g, overlay);   // every label's box, for the overlap tests
  g.font = font(12); g.fillStyle = "#1b1f24";
  B.forEach(function (b, l) {
    g.textAlign = "left"; g.textBaseline = "bottom"; g.fillText("layer " + l + ", head " + head, b.x, b.y - 4);
    var key = "key s (0 … " + (L - 1) + " min)";   // a phone's narrow maps: the short form
    if (g.measureText(key).width > b.width + PAD.gap - 6) key = "key s (min)";
    g.textAlign = "center"; g.textBaseline = "top"; g.fillText(key, b.x + b.width / 2, b.y + b.height + 4);
  });
  g.save(); g.translate(12, B[0].y + B[0].height / 2); g.rotate(-Math.PI / 2); g.textAlign = "center"; g.textBaseline = "middle";
  g.fillText("query t (rows, min)", 0, 0); g.restore();
}

export const attentionLayers = {
  create: function (canvas, overlay, cap, opts) {
    var q0 = cap.record(cap.record(opts.weights[0]).q), H = q0.shape[1], L = q0.shape[2], E = q0.shape[3], n = opts.layers;
    fitCanvas(canvas);
    var regl = gl.create(canvas, gl.FLOAT_TEXTURES);
    if (!regl) return null;
    var lut = regl.texture({ width: 256, height: 1, data: colormaps.lut("viridis"), min: "nearest", mag: "nearest" });
    var T4 = Math.ceil(E / 4), cache = {}, labelsKey = null;
    function tex(name, sample, lse) {
      var key = name + "#" + sample;
      if (cache[key]) return cache[key];
      var a = cap.slice(name, sample);
      if (lse) return (cache[key] = regl.texture({ width: L, height: H, data: a, format: "luminance", type: "float", min: "nearest", mag: "nearest" }));
      var p = packQK(a, H, L, E);
      return (cache[key] = regl.texture({ width: p.width, height: L, data: p.data, format: "rgba", type: "float", min: "nearest", mag: "nearest" }));
    }
    var cmd = regl({
      vert: attWeightsVert, frag: attWeightsFrag,
      attributes: { position: [-1, -1, 1, -1, -1, 1, -1, 1, 1, -1, 1, 1] }, count: 6,
      uniforms: { qTex: regl.prop("q"), kTex: regl.prop("k"), lseTex: regl.prop("lse"), lut: lut, L: L, heads: H,
                  texPerHead: T4, texWidth: H * T4, head: regl.prop("head"), scale: regl.prop("scale"),
                  maskDiagonal: regl.prop("mask"), mode: 2, vmax: 1, logMin: LOG_MIN, logMax: LOG_MAX },
      viewport: regl.prop("viewport"), scissor: { enable: true, box: regl.prop("viewport") }, depth: { enable: false },
    });
    var state = { head: opts.head, sample: opts.sample }, B = [], maps = texCache(regl, 32e6);  // one pass per map
    function draw(head, sample) {
      if (head !== undefined) state.head = head;
      if (sample !== undefined) state.sample = sample;
      fitCanvas(canvas); regl.poll(); regl.clear({ color: [1, 1, 1, 1] });
      B = boxes(canvas, n);
      var sx = canvas.width / canvas.clientWidth, sy = canvas.height / canvas.clientHeight;
      for (var l = 0; l < n; l++) {
        var w = cap.record(opts.weights[l]), b = B[l];
        var vp = { x: Math.round(b.x * sx), y: Math.round(canvas.height - (b.y + b.height) * sy), width: Math.round(b.width * sx), height: Math.round(b.height * sy) };
        maps.draw([w.q, state.sample, state.head].join("|"), vp, function (v) {
          cmd({ q: tex(w.q, state.sample), k: tex(w.k, state.sample), lse: tex(w.lse, state.sample, true), head: state.head,
                scale: w.scale, mask: !!w.mask_diagonal, viewport: v });
        });
      }
      var key = [canvas.clientWidth, canvas.clientHeight, window.devicePixelRatio, state.head].join("|");
      if (key !== labelsKey) { labelsKey = key; labels(overlay, canvas, B, L, state.head); }   // a redrawn 2D canvas is re-uploaded whole
    }
    // the first draw is the caller's (draw(), a step of its own); a resize redraws through opts.later if given
    // (core.onScreen: not while off screen)
    onResize(canvas, function () { if (opts.later) opts.later(function () { draw(); }); else draw(); });
    return { draw: draw, boxes: function () { return B; }, state: state };
  },
};

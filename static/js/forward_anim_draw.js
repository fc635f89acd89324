/* forward_anim_draw.js: the WebGL side of the animated forward pass (regl; shaders in static/glsl).
 *   animDraw.create(regl, cmap) -> {
 *     texture(key, values, rows, cols, range)  colour-mapped RGBA8 texture of a (rows x cols) tensor (cached by key;
 *                                              values scaled to [-range, range] through the diverging colormap),
 *     block({centre, size, angle, texA, texB, mix, fade})   one rectangle in CSS pixels (forward_anim_block.*),
 *     particles(list)                          [{x, y, rgba, size}] as round points (forward_anim_particle.*),
 *     clear(W, H, ratio)                       start a frame: CSS size, backing-store pixels per CSS pixel
 *   }
 *   animDraw.corners(b) -> the block's 4 screen corners (top-left, top-right, bottom-right, bottom-left of the
 *                          unturned block), the same maths as the vertex shader, for outlines and labels.
 */
import blockFrag from "../glsl/forward_anim_block.frag";
import blockVert from "../glsl/forward_anim_block.vert";
import particleFrag from "../glsl/forward_anim_particle.frag";
import particleVert from "../glsl/forward_anim_particle.vert";
import { colormaps } from "./colormaps.js";

function colourMap(values, rows, cols, range, lut) {
  var img = new Uint8Array(rows * cols * 4);
  for (var i = 0; i < rows * cols; i++) {
    var t = 0.5 + 0.5 * values[i] / (range || 1), k = Math.round(Math.max(0, Math.min(1, t)) * 255) * 4;
    img[4 * i] = lut[k]; img[4 * i + 1] = lut[k + 1]; img[4 * i + 2] = lut[k + 2]; img[4 * i + 3] = 255;
  }
  return img;
}

function create(regl, cmap) {
  var lut = colormaps.lut(cmap), cache = {};
  var css = [1, 1], ratio = 1;      // the canvas' CSS size and backing-store pixels per CSS pixel (set by clear)
  var view = function () { return css; };
  var drawBlock = regl({
    vert: blockVert, frag: blockFrag,
    attributes: { corner: [[0, 0], [1, 0], [1, 1], [0, 0], [1, 1], [0, 1]] }, count: 6,
    uniforms: { view: view, centre: regl.prop("centre"), size: regl.prop("size"), angle: regl.prop("angle"),
                texA: regl.prop("texA"), texB: regl.prop("texB"), mixAB: regl.prop("mix"), fade: regl.prop("fade") },
    depth: { enable: false },
  });
  var pos = regl.buffer({ usage: "dynamic", type: "float", length: 8 }), col = regl.buffer({ usage: "dynamic", type: "float", length: 16 });
  var siz = regl.buffer({ usage: "dynamic", type: "float", length: 4 });
  var drawPoints = regl({
    vert: particleVert, frag: particleFrag, primitive: "points",
    attributes: { position: { buffer: pos, size: 2 }, color: { buffer: col, size: 4 }, size: { buffer: siz, size: 1 } },
    uniforms: { view: view, dpr: function () { return ratio; } },
    count: regl.prop("count"),
    blend: { enable: true, func: { src: "src alpha", dst: "one minus src alpha" } },
    depth: { enable: false },
  });
  return {
    texture: function (key, values, rows, cols, range) {
      if (cache[key]) return cache[key];
      return (cache[key] = regl.texture({ width: cols, height: rows, data: colourMap(values, rows, cols, range, lut),
                                          min: "nearest", mag: "nearest", wrapS: "clamp", wrapT: "clamp" }));
    },
    block: function (b) {
      drawBlock({ centre: b.centre, size: b.size, angle: b.angle || 0, texA: b.texA, texB: b.texB || b.texA,
                  mix: b.mix || 0, fade: b.fade || 0 });
    },
    particles: function (list) {
      if (!list.length) return;
      var n = list.length, p = new Float32Array(2 * n), c = new Float32Array(4 * n), s = new Float32Array(n);
      list.forEach(function (q, i) { p[2 * i] = q.x; p[2 * i + 1] = q.y; c.set(q.rgba, 4 * i); s[i] = q.size; });
      pos(p); col(c); siz(s);
      drawPoints({ count: n });
    },
    clear: function (W, H, r) { css = [W, H]; ratio = r; regl.poll(); regl.clear({ color: [1, 1, 1, 1] }); },
  };
}

function corners(b) {
  var c = Math.cos(b.angle || 0), s = Math.sin(b.angle || 0);
  return [[0, 0], [1, 0], [1, 1], [0, 1]].map(function (k) {
    var lx = (k[0] - 0.5) * b.size[0], ly = (k[1] - 0.5) * b.size[1];
    return [b.centre[0] + c * lx + s * ly, b.centre[1] - s * lx + c * ly];
  });
}

export const animDraw = { create: create, corners: corners, colourMap: colourMap };

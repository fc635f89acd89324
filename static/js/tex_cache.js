/* tex_cache.js: draw an expensive full-viewport pass once per key, keep the pixels it drew in a texture of the
 * viewport's size, and show them again with a cheap 1:1 copy (blit.frag) while nothing it depends on changes.
 *   var maps = texCache(regl, 64e6);              // keep at most ~64 MB of RGBA8 textures (least recently used go)
 *   maps.draw(key, viewport, render)              // render(vp) draws the pass into the viewport on a miss
 * On a miss the pass draws straight into the viewport and those pixels are then copied into a new texture
 * (copyTexImage2D, on the GPU: no read-back, no framebuffer to allocate and check), so every key is rendered
 * once: the next request of the key (a sample shown again, a resize-free redraw) is a copy.
 * The copy is pixel-exact: the texture holds the viewport's own pixels and the blit writes them back 1:1.
 * key must name everything the pass reads (data, head, colour scale, colormap ...); the size is added here.
 */
import blitFrag from "../glsl/blit.frag";
import quadVert from "../glsl/quad.vert";

export function texCache(regl, maxBytes) {
  var entries = new Map(), bytes = 0;          // Map keeps insertion order: first = least recently used
  var blit = regl({
    vert: quadVert, frag: blitFrag,
    attributes: { position: [-1, -1, 1, -1, -1, 1, -1, 1, 1, -1, 1, 1] }, count: 6,
    uniforms: { tex: regl.prop("tex") },
    viewport: regl.prop("viewport"), scissor: { enable: true, box: regl.prop("viewport") }, depth: { enable: false },
  });
  function evict(need) {
    while (entries.size && bytes + need > maxBytes) {
      var k = entries.keys().next().value, e = entries.get(k);
      entries.delete(k); bytes -= e.bytes; e.tex.destroy();
    }
  }
  function keep(k, vp) {   // the viewport's pixels, just drawn into the drawing buffer, into a texture
    var need = vp.width * vp.height * 4;
    if (need > maxBytes) return;
    evict(need);
    // rgb: WebGL 1 copies only channels the drawing buffer has, and gl.create's canvases have no alpha
    var tex = regl.texture({ copy: true, x: vp.x, y: vp.y, width: vp.width, height: vp.height, format: "rgb",
                             min: "nearest", mag: "nearest" });
    entries.set(k, { tex: tex, bytes: need });
    bytes += need;
  }
  return {
    draw: function (key, viewport, render) {
      if (viewport.width < 1 || viewport.height < 1) return;
      var k = key + "|" + viewport.width + "x" + viewport.height, e = entries.get(k);
      if (e) {
        entries.delete(k); entries.set(k, e);      // most recently used
        blit({ tex: e.tex, viewport: viewport });
        return;
      }
      render(viewport);
      keep(k, viewport);
    },
    size: function () { return entries.size; },
    clear: function () { entries.forEach(function (e) { e.tex.destroy(); }); entries.clear(); bytes = 0; },
  };
}

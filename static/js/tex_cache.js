/* tex_cache.js: draw an expensive full-viewport pass once per key into an off-screen texture of the viewport's
 * size, then show it with a cheap 1:1 copy (blit.frag) while nothing it depends on changes.
 *   var maps = texCache(regl, 64e6);              // keep at most ~64 MB of RGBA8 textures (least recently used go)
 *   maps.draw(key, viewport, render)              // render(vp) draws into the texture on a miss, with
 *                                                 // vp = {x: 0, y: 0, width, height} of the viewport's size
 * The first request of a key draws straight into the viewport (a page's first frame allocates no textures);
 * a key asked for again is drawn into a texture and copied from then on.
 * The copy is pixel-exact: the texture has the viewport's size and the pass rasterises the same quad there.
 * key must name everything the pass reads (data, head, colour scale, colormap ...); the size is added here.
 */
import blitFrag from "../glsl/blit.frag";
import heatmapVert from "../glsl/heatmap.vert";

export function texCache(regl, maxBytes) {
  var entries = new Map(), bytes = 0;          // Map keeps insertion order: first = least recently used
  var blit = regl({
    vert: heatmapVert, frag: blitFrag,
    attributes: { position: [-1, -1, 1, -1, -1, 1, -1, 1, 1, -1, 1, 1] }, count: 6,
    uniforms: { tex: regl.prop("tex") },
    viewport: regl.prop("viewport"), scissor: { enable: true, box: regl.prop("viewport") }, depth: { enable: false },
  });
  function evict(need) {
    while (entries.size && bytes + need > maxBytes) {
      var k = entries.keys().next().value, e = entries.get(k);
      entries.delete(k); bytes -= e.bytes; e.fbo.destroy();
    }
  }
  function texture(key, w, h, render) {
    var e = entries.get(key);
    if (e) { entries.delete(key); entries.set(key, e); return e.fbo; }
    evict(w * h * 4);
    var fbo = regl.framebuffer({ width: w, height: h, colorType: "uint8", depthStencil: false });
    fbo.use(function () { render({ x: 0, y: 0, width: w, height: h }); });
    entries.set(key, { fbo: fbo, bytes: w * h * 4 });
    bytes += w * h * 4;
    return fbo;
  }
  var seen = new Set();                          // keys drawn once: the second request caches them
  return {
    draw: function (key, viewport, render) {
      if (viewport.width < 1 || viewport.height < 1) return;
      var k = key + "|" + viewport.width + "x" + viewport.height;
      if (!entries.has(k) && !seen.has(k)) {       // first time: straight into the canvas (no texture to allocate)
        if (seen.size > 4096) seen.clear();
        seen.add(k);
        render(viewport);
        return;
      }
      blit({ tex: texture(k, viewport.width, viewport.height, render).color[0], viewport: viewport });
    },
    size: function () { return entries.size; },
    clear: function () { entries.forEach(function (e) { e.fbo.destroy(); }); entries.clear(); bytes = 0; },
  };
}

/* forward_anim_render.js: draws one frame of the animated forward pass: the scene's blocks and particles in WebGL
 * (forward_anim_draw.js) and its axis labels on the 2D overlay, redrawn only when they change.
 *   createRenderer(canvas, overlay, regl, env) -> {render(scene, t, A), fit(resolution)}
 *   env(A) -> the scenes' env (forward_anim_scenes.js). render records A.particles, A.blocks and A.drawMs.
 */
import { overlay2d } from "./core.js";
import { animDraw } from "./forward_anim_draw.js";

function fit(canvas, resolution) {   // backing store = CSS size x devicePixelRatio x resolution (lowered when slow)
  var r = (window.devicePixelRatio || 1) * resolution;
  var w = Math.max(1, Math.round(canvas.clientWidth * r)), h = Math.max(1, Math.round(canvas.clientHeight * r));
  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
  return canvas.width / Math.max(1, canvas.clientWidth);
}

export function createRenderer(canvas, overlay, regl, env) {
  var draw = animDraw.create(regl, "burd"), labelKey = null;
  function render(scene, t, A) {
    var t0 = performance.now(), e = env(draw.texture), fr = scene.frame(t, e), key;
    draw.clear(e.W, e.H, fit(canvas, A.resolution));
    fr.blocks.forEach(draw.block);
    draw.particles(fr.particles);
    key = [scene.key, e.W, e.H, e.sample, e.layer, e.head, fr.labelKey].join("|");
    if (key !== labelKey || fr.labelKey === undefined) { fr.label(overlay2d(overlay, e.W, e.H)); labelKey = key; }
    A.particles = fr.particles; A.blocks = fr.blocks;
    A.drawMs = performance.now() - t0;
  }
  return { render: render };
}

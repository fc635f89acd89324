/* forward_anim.js: the animated forward pass of the Forward page (forward-pass.md 4.4): play / pause / step /
 * speed, layer and head of the attention scene, a frame loop that measures its own frame times and sends fewer
 * particles when they grow (graceful degradation on software WebGL), and prefers-reduced-motion (no motion:
 * Play and Step show each scene's end state, one per click).
 *   createForwardAnim({canvas, overlay, caption, status, controls, pg, data, sample(), onStage(stage)})
 *     -> {state, scenes, seek(scene, t) -> particles, renderAt(t), particles(), draw(), play(), pause(), step()}
 * Scenes: forward_anim_scenes.js; drawing: forward_anim_draw.js; data: forward_anim_data.js; the frame-rate
 * policy: forward_anim_quality.js (checked every 30 frames, on the mean frame time of the last 30).
 */
import { animationsOff, controls, fmt, overlay2d } from "./core.js";
import { animDraw } from "./forward_anim_draw.js";
import { scenes as makeScenes } from "./forward_anim_scenes.js";
import { quality } from "./forward_anim_quality.js";
import { gl } from "./gl.js";

var WINDOW = 30, SPEEDS = [0.5, 1, 2];

function range(n) { var a = []; for (var i = 0; i < n; i++) a.push(i); return a; }

export function createForwardAnim(o) {
  var m = o.pg.model, regl = gl.create(o.canvas);
  if (!regl) return null;
  var draw = animDraw.create(regl, "burd"), scenes = makeScenes(m), P = o.data.table(0, 0, 0).P;
  var A = { scene: 0, t: 0, playing: false, speed: 1, layer: 0, head: 0, perQuery: P, maxPerQuery: P, resolution: 1,
            frames: 0, frameMs: [], fps: null, drawMs: null, degraded: 0, particles: [], blocks: [] };
  var raf = 0, last = null, skipNext = false;

  function env() {
    return { W: o.canvas.clientWidth, H: o.canvas.clientHeight, m: m, data: o.data, tex: draw.texture,
             sample: o.sample(), layer: A.layer, head: A.head, perQuery: A.perQuery };
  }
  var labelKey = null;
  function fit() {     // backing store = CSS size x devicePixelRatio x A.resolution (lowered when frames are slow)
    var r = (window.devicePixelRatio || 1) * A.resolution, w = Math.max(1, Math.round(o.canvas.clientWidth * r)), h = Math.max(1, Math.round(o.canvas.clientHeight * r));
    if (o.canvas.width !== w || o.canvas.height !== h) { o.canvas.width = w; o.canvas.height = h; }
    return o.canvas.width / Math.max(1, o.canvas.clientWidth);
  }
  function overlay(W, H) {   // overlay2d, but the backing store is only reallocated when the size changes
    var dpr = window.devicePixelRatio || 1, g;
    if (o.overlay.width !== Math.round(W * dpr) || o.overlay.height !== Math.round(H * dpr)) return overlay2d(o.overlay, W, H);
    g = o.overlay.getContext("2d"); g.setTransform(dpr, 0, 0, dpr, 0, 0); g.clearRect(0, 0, W, H);
    return g;
  }
  function render() {
    var t0 = performance.now(), e = env(), fr = scenes[A.scene].frame(A.t, e), key;
    draw.clear(e.W, e.H, fit());
    fr.blocks.forEach(draw.block);
    draw.particles(fr.particles);
    key = [A.scene, e.W, e.H, e.sample, A.layer, A.head, fr.labelKey].join("|");
    if (key !== labelKey || fr.labelKey === undefined) { fr.label(overlay(e.W, e.H)); labelKey = key; }
    A.particles = fr.particles; A.blocks = fr.blocks;
    A.drawMs = performance.now() - t0;
  }
  function caption() {
    var sc = scenes[A.scene];
    o.caption.textContent = "";
    var b = document.createElement("strong");
    b.textContent = "Step " + (A.scene + 1) + "/" + scenes.length + " · stage " + sc.stage + " · " + sc.title + ": ";
    o.caption.appendChild(b);
    o.caption.appendChild(document.createTextNode(sc.caption(env()) + " (" + sc.ref + ")."));
  }
  function status() {
    o.status.textContent = (A.fps === null ? "frame rate: measured while playing" : "measured " + fmt(A.fps, 3) + " fps over the last " + A.frameMs.length + " frames") +
      " · " + A.perQuery + " sampled particles per query" + (A.perQuery < A.maxPerQuery ? " (reduced from " + A.maxPerQuery + " to keep 30 fps)" : "") +
      (A.resolution < 1 ? " · drawn at " + A.resolution + "× resolution to keep 30 fps" : "") +
      (animationsOff() ? " · reduced motion: each click shows the next step, without motion" : "");
  }
  function measure(dt) {
    A.frameMs.push(dt); if (A.frameMs.length > WINDOW) A.frameMs.shift();
    if (++A.frames % WINDOW) return;
    var mean = A.frameMs.reduce(function (a, b) { return a + b; }, 0) / A.frameMs.length;
    A.fps = 1000 / mean;
    var q = quality.next(A, mean, A.particles.length > 0);
    if (q !== A) { if (mean > quality.SLOW_MS) A.degraded++; A.perQuery = q.perQuery; A.resolution = q.resolution; }
    status();
  }
  function goTo(i, t) {
    var changed = i !== A.scene;
    A.scene = i; A.t = t;
    if (changed || t === 0) { caption(); if (o.onStage) o.onStage(scenes[i].stage); skipNext = true; }
  }
  function tick(now) {
    if (!A.playing) return;
    var dt = last === null ? 0 : now - last;
    last = now;
    if (dt > 0 && !skipNext) measure(dt);   // not the frame that paid for a scene change's 3D-view redraw
    skipNext = false;
    A.t += dt * A.speed / scenes[A.scene].ms;
    if (A.t >= 1) { if (A.scene < scenes.length - 1) goTo(A.scene + 1, 0); else { A.t = 1; render(); pause(); return; } }
    render();
    raf = requestAnimationFrame(tick);
  }
  function play() {
    if (animationsOff()) { step(); return; }
    if (A.playing) return;
    if (A.scene === scenes.length - 1 && A.t >= 1) goTo(0, 0);
    A.playing = true; last = null; playBtn.textContent = "Pause"; playBtn.setAttribute("aria-pressed", "true");
    raf = requestAnimationFrame(tick);
  }
  function pause() {
    A.playing = false; cancelAnimationFrame(raf);
    playBtn.textContent = animationsOff() ? "Next step" : "Play"; playBtn.setAttribute("aria-pressed", "false");
    status();
  }
  function step() {      // the next scene's end state (the first scene's when at the end)
    pause();
    goTo(A.t >= 1 ? (A.scene + 1) % scenes.length : A.scene, 1);
    caption(); render();
  }
  function seek(i, t) {
    pause();
    goTo(typeof i === "string" ? scenes.findIndex(function (s) { return s.key === i; }) : i, t);
    caption(); render();
    return A.particles.map(function (q) { return { query: q.query, key: q.key, lead: q.lead, p: q.p, x: q.x, y: q.y }; });
  }

  var ctl = o.controls;
  var playBtn = controls.button(ctl, animationsOff() ? "Next step" : "Play", function () { if (A.playing) pause(); else play(); });
  playBtn.id = "fwd-anim-play"; playBtn.setAttribute("aria-pressed", "false");
  controls.button(ctl, "Step", step).id = "fwd-anim-step";
  controls.select(ctl, "Speed", SPEEDS.map(function (s) { return { value: s, label: s + "×" }; }), 1,
    function (v) { A.speed = Number(v); }).id = "fwd-anim-speed";
  controls.select(ctl, "Layer", range(m.n_layers), 0, function (v) { A.layer = Number(v); caption(); render(); }).id = "fwd-anim-layer";
  controls.select(ctl, "Head", range(m.n_head), 0, function (v) { A.head = Number(v); caption(); render(); }).id = "fwd-anim-head";
  caption(); status(); render();
  function renderAt(t) { A.t = t; render(); }     // one frame of the current scene, no DOM work (benchmarks)
  return { state: A, scenes: scenes, seek: seek, renderAt: renderAt, particles: function () { return A.particles; }, draw: function () { caption(); render(); },
           play: play, pause: pause, step: step };
}

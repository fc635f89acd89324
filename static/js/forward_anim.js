/* forward_anim.js: the animated forward pass of the Forward page (forward-pass.md 4.4): play / pause / step /
 * speed, layer and head of the attention scene, a frame loop that measures its own frame times and lowers its
 * cost when they grow (graceful degradation on software WebGL), and prefers-reduced-motion (no motion: Play and
 * Step show each scene's end state, one per click).
 *   createForwardAnim({canvas, overlay, caption, status, controls, pg, data, sample(), clock(), onStage(stage)})
 *     clock(): the shown sample's window in clock time (time_axis.js windowClock), for the time axes
 *     -> {state, scenes, open(), prepare(), seek(scene, t) -> particles, renderAt(t), particles(), draw(), play(), pause(),
 *         step()}
 *   The controls and caption are built at once; the WebGL context (open(), alone: gl.open), regl on it (prepare())
 *   and the first frame wait for the first draw (the page makes them after it is ready, a task each: the view sits
 *   below the fold), or for the first control that needs a frame.
 * Scenes: forward_anim_scenes.js; one frame: forward_anim_render.js; data: forward_anim_data.js; the frame-rate
 * policy: forward_anim_quality.js (checked every 30 frames, on the mean frame time of the last 30).
 */
import { animationsOff, controls, fmt } from "./core.js";
import { quality } from "./forward_anim_quality.js";
import { createRenderer } from "./forward_anim_render.js";
import { scenes as makeScenes } from "./forward_anim_scenes.js";
import { gl } from "./gl.js";

var WINDOW = 30, SPEEDS = [0.5, 1, 2];

function range(n) { var a = []; for (var i = 0; i < n; i++) a.push(i); return a; }

/* frame times of the last WINDOW frames -> A.fps, and the quality policy every WINDOW frames */
function measure(A, dt) {
  A.frameMs.push(dt); if (A.frameMs.length > WINDOW) A.frameMs.shift();
  if (++A.frames % WINDOW) return false;
  var mean = A.frameMs.reduce(function (a, b) { return a + b; }, 0) / A.frameMs.length, q = quality.next(A, mean, A.particles.length > 0);
  A.fps = 1000 / mean;
  if (q !== A) { if (mean > quality.SLOW_MS) A.degraded++; A.perQuery = q.perQuery; A.resolution = q.resolution; }
  return true;
}

function statusText(A) {
  return (A.fps === null ? "frame rate: measured while playing" : "measured " + fmt(A.fps, 3) + " fps over the last " + A.frameMs.length + " frames") +
    " · " + A.perQuery + " sampled particles per query" + (A.perQuery < A.maxPerQuery ? " (reduced from " + A.maxPerQuery + " to keep 30 fps)" : "") +
    (A.resolution < 1 ? " · drawn at " + A.resolution + "× resolution to keep 30 fps" : "") +
    (animationsOff() ? " · reduced motion: each click shows the next step, without motion" : "");
}

function captionTo(el, A, sc, n, env) {
  el.textContent = "";
  var b = document.createElement("strong");
  b.textContent = "Step " + (A.scene + 1) + "/" + n + " · stage " + sc.stage + " · " + sc.title + ": ";
  el.appendChild(b);
  el.appendChild(document.createTextNode(sc.caption(env) + " (" + sc.ref + ")."));
}

function addControls(ctl, m, A, h) {
  var play = controls.button(ctl, animationsOff() ? "Next step" : "Play", h.toggle);
  play.id = "fwd-anim-play"; play.setAttribute("aria-pressed", "false");
  controls.button(ctl, "Step", h.step).id = "fwd-anim-step";
  controls.select(ctl, "Speed", SPEEDS.map(function (s) { return { value: s, label: s + "×" }; }), 1,
    function (v) { A.speed = Number(v); }).id = "fwd-anim-speed";
  controls.select(ctl, "Layer", range(m.n_layers), 0, function (v) { A.layer = Number(v); h.redraw(); }).id = "fwd-anim-layer";
  controls.select(ctl, "Head", range(m.n_head), 0, function (v) { A.head = Number(v); h.redraw(); }).id = "fwd-anim-head";
  return play;
}

export function createForwardAnim(o) {
  var m = o.pg.model, R = null;
  var scenes = makeScenes(m), P = o.data.table(0, 0, 0).P, raf = 0, last = null, skipNext = false, playBtn;
  var A = { scene: 0, t: 0, playing: false, speed: 1, layer: 0, head: 0, perQuery: P, maxPerQuery: P, resolution: 1,
            frames: 0, frameMs: [], fps: null, drawMs: null, degraded: 0, particles: [], blocks: [] };
  function env(tex) {
    return { W: o.canvas.clientWidth, H: o.canvas.clientHeight, m: m, data: o.data, tex: tex,
             sample: o.sample(), clock: o.clock(), layer: A.layer, head: A.head, perQuery: A.perQuery };
  }
  function open() { if (!R) gl.open(o.canvas); }   // the WebGL context alone (a task of its own before prepare)
  function prepare() {   // regl on that context and the renderer's commands, once
    if (R) return R;
    var regl = gl.create(o.canvas);
    if (!regl) throw new Error("no WebGL context for the animation");
    return (R = createRenderer(o.canvas, o.overlay, regl, env));
  }
  function render() { prepare().render(scenes[A.scene], A.t, A); }
  function caption() { captionTo(o.caption, A, scenes[A.scene], scenes.length, env(null)); }
  function status() { o.status.textContent = statusText(A); }
  function goTo(i, t) {
    var changed = i !== A.scene;
    A.scene = i; A.t = t;
    if (changed || t === 0) { caption(); if (o.onStage) o.onStage(scenes[i].stage); skipNext = true; }
  }
  function tick(now) {
    if (!A.playing) return;
    var dt = last === null ? 0 : now - last;
    last = now;
    if (dt > 0 && !skipNext && measure(A, dt)) status();   // not the frame that paid for a scene change's 3D redraw
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
  function step() {      // this scene's end state, or the next scene's when already there
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
  function redraw() { caption(); render(); }
  playBtn = addControls(o.controls, m, A, { toggle: function () { if (A.playing) pause(); else play(); }, step: step, redraw: redraw });
  caption(); status();
  return { state: A, scenes: scenes, open: open, prepare: function () { prepare(); }, seek: seek, renderAt: function (t) { A.t = t; render(); },   // renderAt: benchmarks
           particles: function () { return A.particles; }, draw: redraw, play: play, pause: pause, step: step };
}

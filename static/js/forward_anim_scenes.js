/* forward_anim_scenes.js: the six scenes of the animated forward pass (forward-pass.md 4.4 "Animated data flow").
 * A scene is {key, stage, title, ref, ms, caption(env), frame(t, env) -> {blocks, particles, label(g)}} with t in
 * [0, 1] (labelKey: the overlay is redrawn only when it changes); env = {W, H, m (page().model), data (forward_anim_data.js), tex(key, values, rows, cols, range),
 * sample, clock (the window's time_axis.js windowClock), layer, head, perQuery}. Geometry is in CSS pixels; blocks go to forward_anim_draw.js, labels to the 2D
 * overlay. Every size comes from the tensors' shapes or page().model.
 */
import { colormaps } from "./colormaps.js";
import { fmt } from "./core.js";
import { particles } from "./forward_anim_particles.js";
import { animAxes } from "./forward_anim_axes.js";

var HALF_PI = Math.PI / 2;
function ease(t) { return t < 0 ? 0 : t > 1 ? 1 : t * t * (3 - 2 * t); }
function lerp(a, b, t) { return a + (b - a) * t; }

/* layout: block extents from the feature count n (sqrt scale, the FFN width fills featMax) */
export function layout(W, H, m) {
  var ml = 92, mr = 24, mt = 18, mb = 52, bars = 46;
  var featMax = Math.max(40, Math.min(H - mt - mb - bars, (W - ml - mr) * 0.3));
  var timeH = H - mt - mb - bars;
  return {
    ml: ml, mt: mt, mb: mb, featMax: featMax,
    feat: function (n) { return Math.max(5, featMax * Math.sqrt(n / m.d_ff)); },
    timeW: W - ml - mr, timeH: timeH,
    pre: [ml + (W - ml - mr) / 2, mt + bars + timeH / 2],
    post: [ml + featMax / 2 + 6, mt + bars + timeH / 2],
  };
}

function tensorTex(env, name) {
  var t = env.data.tensor(name, env.sample);
  return { t: t, tex: env.tex(name + "#" + env.sample, t.values, t.rows, t.cols, t.range) };
}
function stripTex(env, key, values, range) { return env.tex(key + "#" + env.sample + "#" + env.layer, values, values.length, 1, range); }

/* a (rows x time) morph before the transpose: A's rows -> B's rows */
function morph(names, label) {
  return function (t, env) {
    var Ly = layout(env.W, env.H, env.m), e = ease(t), a = tensorTex(env, names[0]), b = tensorTex(env, names[1]);
    var rows = lerp(a.t.shape[1], b.t.shape[1], e), blk = { centre: Ly.pre, size: [Ly.timeW, lerp(Ly.feat(a.t.shape[1]), Ly.feat(b.t.shape[1]), e)],
                                                             texA: a.tex, texB: b.tex, mix: e };
    return { blocks: [blk], particles: [], labelKey: Math.round(blk.size[1] / 3) + ":" + Math.round(rows), label: function (g) {
      animAxes.pre(g, blk, env.m.window, label + " " + Math.round(rows) + "  (" + a.t.shape[1] + " → " + b.t.shape[1] + ")", env.clock);
    } };
  };
}

function transpose(t, env) {
  var Ly = layout(env.W, env.H, env.m), e = ease(t), p = tensorTex(env, env.data.from.transpose[0]), d = p.t.shape[1];
  var a = e * HALF_PI, h = Ly.feat(d), len = lerp(Ly.timeW, Ly.timeH, e), room = env.H - 2 * Ly.mt;
  if (Math.sin(a) > 0) len = Math.min(len, (room - h * Math.cos(a)) / Math.sin(a));   // the turning block stays in view
  var blk = { centre: [lerp(Ly.pre[0], Ly.post[0], e), Ly.pre[1]], size: [len, h], angle: a, texA: p.tex };
  return { blocks: [blk], particles: [], labelKey: e < 1 ? "turning" : "turned", label: function (g) {
    if (e < 1) animAxes.turning(g, blk); else animAxes.post(g, blk, env.m.window, "feature", d, undefined, env.clock);
  } };
}

function postBlock(env, dimmed) {
  var Ly = layout(env.W, env.H, env.m), p = tensorTex(env, env.data.from.transpose[0]);
  return { Ly: Ly, d: p.t.shape[1], blk: { centre: Ly.post, size: [Ly.timeH, Ly.feat(p.t.shape[1])], angle: HALF_PI, texA: p.tex, fade: dimmed } };
}

/* time step -> y on the turned block (time 0 at the bottom) */
function yOf(blk, step, L) { return blk.centre[1] + blk.size[0] / 2 - (step + 0.5) / L * blk.size[0]; }

function attention(t, env) {
  var pb = postBlock(env, 0.55), blk = pb.blk, L = env.m.window, tab = env.data.table(env.sample, env.layer, env.head);
  var xr = blk.centre[0] + blk.size[1] / 2 + 3, Q = tab.queries.length, list = particles.at(tab, t, env.perQuery);
  var pts = list.map(function (q) {
    var a = [xr, yOf(blk, q.query, L)], b = [xr, yOf(blk, q.key, L)];
    var c = [xr + 26 + 0.55 * Math.abs(a[1] - b[1]), (a[1] + b[1]) / 2], xy = particles.bezier(q.p, a, c, b);
    var rgb = colormaps.map("viridis", tab.queries.indexOf(q.query) / Math.max(1, Q - 1));
    var alpha = Math.min(1, 0.25 + 3 * Math.min(q.p, 1 - q.p));
    return { x: xy[0], y: xy[1], size: q.lead ? 10 : 6, rgba: [rgb[0] / 255, rgb[1] / 255, rgb[2] / 255, alpha],
             query: q.query, key: q.key, lead: q.lead, p: q.p };
  });
  return { blocks: [blk], particles: pts, labelKey: "", label: function (g) {
    animAxes.post(g, blk, L, "feature", pb.d, undefined, env.clock);
    animAxes.queries(g, blk, tab.queries.map(function (s) { return yOf(blk, s, L); }), xr);
  } };
}

function ffn(t, env) {
  var pb = postBlock(env, 0), blk = pb.blk, m = env.m, up = t < 0.5, e = ease(up ? 2 * t : 2 * t - 1);
  var a = env.data.ffn(up ? "in" : "hidden", env.sample, env.layer), b = env.data.ffn(up ? "hidden" : "out", env.sample, env.layer);
  var units = lerp(a.units, b.units, e);
  blk.size = [blk.size[0], lerp(pb.Ly.feat(a.units), pb.Ly.feat(b.units), e)];
  blk.texA = stripTex(env, up ? "in" : "hidden", a.values, a.range);
  blk.texB = stripTex(env, up ? "hidden" : "out", b.values, b.range);
  blk.mix = e;
  return { blocks: [blk], particles: [], labelKey: Math.round(blk.size[1] / 3) + ":" + Math.round(units), label: function (g) {
    animAxes.post(g, blk, m.window, "unit", Math.round(units), "FFN width " + Math.round(units) + " units (" + m.d_model + " → " + m.d_ff + " → " + m.d_model + ")", env.clock);
  } };
}

function film(t, env) {
  var pb = postBlock(env, 0), blk = pb.blk, f = env.data.film(env.sample, env.layer), e = ease(t), bars = [];
  blk.texA = stripTex(env, "film-out", f.out, f.range);
  blk.texB = stripTex(env, "film-filmed", f.filmed, f.range);
  blk.mix = e;
  [["γ", f.gamma, f.gammaRange], ["β", f.beta, f.betaRange]].forEach(function (gb, i) {
    bars.push({ name: gb[0], centre: [blk.centre[0], blk.centre[1] - blk.size[0] / 2 - 12 - 19 * (1 - i)], size: [13, blk.size[1]],
                angle: HALF_PI, texA: stripTex(env, "film-" + gb[0], gb[1], gb[2]), fade: 1 - Math.min(1, 2 * e), range: gb[2] });
  });
  return { blocks: [blk].concat(bars), particles: [], labelKey: "", label: function (g) {
    animAxes.post(g, blk, env.m.window, "feature", f.out.length, null, env.clock);
    bars.forEach(function (b) { animAxes.bar(g, b, b.name + " (±" + fmt(b.range, 3) + ")"); });
  } };
}

export function scenes(m) {
  return [
    { key: "conv", stage: "2", title: "Dilated conv embedding", ref: "forward-pass.md 4.2 stage 2", ms: 2600,
      caption: function () { return m.n_channels + " input channels → " + m.c_embedding + " embedding channels: dilated convolutions (dilations " + m.dilations.join(", ") + ") mix each step with up to " + m.receptive_fields[m.receptive_fields.length - 1] + " neighbouring steps"; },
      frame: function (t, env) { return morph(env.data.from.conv, "channels")(t, env); } },
    { key: "projection", stage: "4", title: "Input projection", ref: "forward-pass.md 4.2 stage 4", ms: 2600,
      caption: function () { return "a 1×1 convolution expands " + m.c_embedding + " channels to d_model = " + m.d_model + " features at every time step (shown as " + "time-binned means)"; },
      frame: function (t, env) { return morph(env.data.from.projection, "features")(t, env); } },
    { key: "transpose", stage: "5", title: "Transpose", ref: "forward-pass.md 4.2 stage 5", ms: 2600,
      caption: function () { return "(feature, time) → (time, feature): the block turns 90°; from here time runs upwards"; },
      frame: transpose },
    { key: "attention", stage: "7", title: "Self-attention", ref: "forward-pass.md 4.2 stage 7b", ms: 6000,
      caption: function (env) { return "layer " + env.layer + ", head " + env.head + ": each marked query step sends particles to key steps drawn from its real attention row (the large one to the row's strongest key); dimmed behind them: the encoder's input (stage 5)"; },
      frame: attention },
    { key: "ffn", stage: "7", title: "Feed-forward network", ref: "forward-pass.md 4.2 stage 7e", ms: 3600,
      caption: function (env) { return "layer " + env.layer + ": the FFN breathes " + m.d_model + " → " + m.d_ff + " → " + m.d_model + " (colour: each unit's mean over the window; input = LayerNorm, hidden = GELU)"; },
      frame: ffn },
    { key: "film", stage: "7", title: "FiLM modulation", ref: "forward-pass.md 4.2 stage 7f", ms: 3200,
      caption: function (env) { return "layer " + env.layer + ": the FFN output is coloured by this sample's conditioning, (1 + γ) · x + β, feature by feature (real γ, β; mean over the window)"; },
      frame: film },
  ];
}

/* forward_anim_quality.js: how the animated forward pass keeps 30 fps (pure; node-tested).
 *   quality.next(q, meanMs, particles) -> the next {perQuery, maxPerQuery, resolution} given the mean frame time of
 *   the last frames: slower than 1/30 s: halve the particles per query (down to 3), then draw at half resolution,
 *   then one particle per query; faster than 1/50 s: full resolution first, then double the particles back. In a
 *   scene without particles (particles false) only the resolution changes. Returns q itself (unchanged) when there
 *   is nothing to change.
 */
export var SLOW_MS = 1000 / 30, FAST_MS = 1000 / 50;

function next(q, meanMs, particles) {
  var o = { perQuery: q.perQuery, maxPerQuery: q.maxPerQuery, resolution: q.resolution };
  particles = particles !== false;
  if (meanMs > SLOW_MS) {
    if (particles && o.perQuery > 3) o.perQuery = Math.floor(o.perQuery / 2);
    else if (o.resolution === 1) o.resolution = 0.5;
    else if (particles && o.perQuery > 1) o.perQuery = 1;
    else return q;
  } else if (meanMs < FAST_MS) {
    if (o.resolution < 1) o.resolution = 1;
    else if (particles && o.perQuery < o.maxPerQuery) o.perQuery = Math.min(o.maxPerQuery, o.perQuery * 2);
    else return q;
  } else return q;
  return o;
}

export const quality = { next: next, SLOW_MS: SLOW_MS, FAST_MS: FAST_MS };

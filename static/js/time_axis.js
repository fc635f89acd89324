/* time_axis.js: a window's steps in clock time (UTC), the one helper behind every time axis over a window's steps
 * (Gate, FiLM, Embedding, Disaggregation, the what-if panels, the Playground). It wraps plot2d's clock axes, which
 * the Data page's day axis uses too, so every page labels and reads time the same way.
 *   windowClock(start, stepS)          -> {start: UTC ms of step 0, per: ms per step} (plot2d's axis.clock);
 *                                         start: an ISO time ("2024-06-09T16:00:00", "...Z", "... 16:00" or
 *                                         "2024-06-09 16:00 UTC", the views' window_starts) in UTC
 *   timeAxis(start, stepS, n, label?)  -> a plot2d x axis over steps 0..n-1, ticks and readout in clock time
 *   stepTicks(clock, lo, hi, maxTicks) -> [{step, label "HH:MM"}] on whole clock steps within [lo, hi] (at least two), for axes
 *                                         drawn by hand (heatmaps: the tick of step t goes at the centre of cell t)
 *   stepTime(clock, step)              -> "HH:MM UTC" (with seconds when the steps are finer than a minute)
 */
import { plot2d } from "./plot2d.js";

export function windowClock(start, stepS) {
  var iso = String(start).trim().replace(/ UTC$/, "").replace(" ", "T").replace(/Z?$/, "Z");
  return { start: Date.parse(iso), per: stepS * 1000 };
}

export function timeAxis(start, stepS, n, label) {
  return { label: label || "time", unit: "UTC", readout: "time", min: 0, max: n - 1, clock: windowClock(start, stepS) };
}

export function stepTicks(clock, lo, hi, maxTicks) {   // never fewer than two ticks (a narrow axis asked for two could get one)
  var n = Math.max(2, maxTicks), ts = plot2d.clockTicks(lo, hi, n, clock);
  for (var k = n + 1; ts.length < 2 && k < n + 8; k++) ts = plot2d.clockTicks(lo, hi, k, clock);
  return ts.map(function (t) { return { step: t, label: plot2d.clockText(clock, t) }; });
}

export function stepTime(clock, step) {
  var iso = new Date(clock.start + step * clock.per).toISOString();
  return iso.slice(11, clock.per < 60000 ? 19 : 16) + " UTC";
}

/* occlusion.js: the arithmetic of an occlusion explanation, as Captum's Occlusion does it (what
 * `nilmbuild explain --method occlusion` runs; nilmbuild/explain/methods.py). Pure functions, no model.
 *
 *   windows(n, size, stride)       -> [{lo, hi}]: the occluded step ranges, Captum's rule
 *   occluded(x, xb, w)             -> the model input x with steps [w.lo, w.hi) of channel 0 taken from xb
 *   target(watts, d, n, t)         -> the explained number: device d's energy over [t.lo, t.hi) (Wh) or power
 *   attribute(f0, fk, wins, n)     -> per step, the mean drop f0 - fk over the windows that cover it
 */

// Captum's windows over n steps: ceil((n - size) / stride) + 1 of them, starting every `stride` steps; the last
// one is cut at the end of the window when the stride does not divide n - size (Captum pads the mask negatively).
export function windows(n, size, stride) {
  var count = Math.ceil((n - size) / stride) + 1, out = [];
  for (var k = 0; k < count; k++) out.push({ lo: k * stride, hi: Math.min(n, k * stride + size) });
  return out;
}

// x and xb are model inputs (channels x n, channel 0 the scaled aggregate) of the signal and of the baseline:
// replacing watts by the baseline's and then scaling equals scaling and then replacing (the scaling is per step).
export function occluded(x, xb, w) {
  var y = Float32Array.from(x);
  y.set(xb.subarray(w.lo, w.hi), w.lo);
  return y;
}

// True when occluding w changes nothing (the signal already equals the baseline there): the copy is x itself.
export function unchanged(x, xb, w) {
  for (var t = w.lo; t < w.hi; t++) if (x[t] !== xb[t]) return false;
  return true;
}

// watts: (devices x n) flat; t: {lo, hi, point, stepS}. Energy: sum(watts[lo:hi]) * stepS / 3600 (Wh); point:
// the power at step lo (W), as nilmbuild/explain/wrapper.py's Target.
export function target(watts, d, n, t) {
  var s = 0, row = d * n;
  for (var i = t.lo; i < t.hi; i++) s += watts[row + i];
  return t.point ? s : s * t.stepS / 3600;
}

// f0: the target at the signal; fk[k]: at the copy with window k occluded. A step's attribution is the mean of
// f0 - fk over the windows that cover it (Captum: total attribution / number of windows per step).
export function attribute(f0, fk, wins, n) {
  var sum = new Float64Array(n), count = new Float64Array(n);
  wins.forEach(function (w, k) {
    for (var t = w.lo; t < w.hi; t++) { sum[t] += f0 - fk[k]; count[t] += 1; }
  });
  for (var t = 0; t < n; t++) sum[t] = count[t] ? sum[t] / count[t] : 0;
  return sum;
}

// The baseline: the window's minimum power at every step (nilmbuild/explain/wrapper.py window_baseline).
export function baseline(signal) {
  var m = Infinity;
  for (var t = 0; t < signal.length; t++) if (signal[t] < m) m = signal[t];
  return new Float32Array(signal.length).fill(m);
}

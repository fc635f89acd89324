/* live_time.js: the model's six time features for a window, as nilmbuild.data.preprocess.exogenous computes
 * them (month / 12, day-of-year / 365, fractional hour / 24, each as sin and cos; times in UTC, a start
 * without a zone is read as UTC like numpy's datetime64). */

// "2024-04-12T08:00" | "2024-04-12" | with Z or +hh:mm -> milliseconds since the epoch; throws on bad input.
export function parseStart(iso) {
  var s = String(iso).trim();
  if (/T\d/.test(s) && !/(Z|[+-]\d\d:?\d\d)$/i.test(s)) s += "Z";
  var ms = Date.parse(s);
  if (!isFinite(ms)) throw new Error("bad start time " + JSON.stringify(iso) + ": use an ISO date-time such as 2024-04-12T08:00");
  return Math.floor(ms / 1000) * 1000;
}

function features(ms) {
  var d = new Date(ms);
  var year0 = Date.UTC(d.getUTCFullYear(), 0, 1);
  var day0 = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  var month = d.getUTCMonth() + 1;
  var doy = Math.round((day0 - year0) / 86400000) + 1;
  var hour = (ms - day0) / 3600000;
  return [[month, 12], [doy, 365], [hour, 24]];
}

// -> Float32Array(6 * length), row-major (feature, time): sin/cos of month, day of year, hour.
export function timeFeatures(startMs, stepS, length) {
  var out = new Float32Array(6 * length);
  for (var t = 0; t < length; t++) {
    var f = features(startMs + t * stepS * 1000);
    for (var j = 0; j < 3; j++) {
      var a = 2 * Math.PI * f[j][0] / f[j][1];
      out[(2 * j) * length + t] = Math.sin(a);
      out[(2 * j + 1) * length + t] = Math.cos(a);
    }
  }
  return out;
}

// An upstream model's calendar value of one step (UTC wall clock): minute 0..59, hour 0..23, dow Monday = 0,
// dom 1..31, month 1..12 (nilmbuild/model/upstream/inputs.py).
function calendar(ms, name) {
  var d = new Date(ms);
  if (name === "minute") return d.getUTCMinutes();
  if (name === "hour") return d.getUTCHours();
  if (name === "dow") return (d.getUTCDay() + 6) % 7;
  if (name === "dom") return d.getUTCDate();
  if (name === "month") return d.getUTCMonth() + 1;
  throw new Error("unknown time feature " + name);
}

// exo: [[name, period], ...] (Python's live data) -> Float32Array(2 * exo.length * length): sin, cos per name.
export function upstreamTimeFeatures(exo, startMs, stepS, length) {
  var out = new Float32Array(2 * exo.length * length);
  for (var t = 0; t < length; t++) {
    var ms = startMs + t * stepS * 1000;
    for (var j = 0; j < exo.length; j++) {
      var a = 2 * Math.PI * calendar(ms, exo[j][0]) / exo[j][1];
      out[(2 * j) * length + t] = Math.sin(a);
      out[(2 * j + 1) * length + t] = Math.cos(a);
    }
  }
  return out;
}

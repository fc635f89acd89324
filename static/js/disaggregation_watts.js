/* disaggregation_watts.js: scaled model units -> watts, as z * a + b per channel. {a, b} comes from Python
 * (page().watts, computed from the scalers by nilmbuild.data.preprocess.scaler_affines): no scaler maths here.
 *   watts.of(key)            {a, b} of "aggregate" or a device name
 *   watts.inverse(key, z)    -> new Float32Array (float64 arithmetic, rounded once to float32)
 *   watts.row(cap, name, b, d)  the (sample, device) slice of a (B, D, L) record
 */
import { fmt, page } from "./core.js";

export const watts = {
  of: function (key) {
    var w = page().watts;
    return key === "aggregate" ? w.aggregate : w.appliances[key];
  },
  inverse: function (key, z) {
    var ab = watts.of(key), out = new Float32Array(z.length);
    for (var i = 0; i < z.length; i++) out[i] = z[i] * ab.a + ab.b;
    return out;
  },
  describe: function (key) {
    var ab = watts.of(key);
    return "W = z × " + fmt(ab.a, 6) + (ab.b ? " + " + fmt(ab.b, 6) : "");
  },
  // (sample, device) slice of a (B, D, L) record -> Float32Array(L)
  row: function (cap, name, b, d) {
    var r = cap.record(name), D = r.shape[1], L = r.shape[2], a = cap.get(name);
    return a.subarray((b * D + d) * L, (b * D + d + 1) * L);
  },
};
export const phaseColors = { input: "#0072B2", embedding: "#E69F00", transformer: "#D55E00", conditioning: "#CC79A7", output: "#009E73" };
export const deviceColors = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7"];

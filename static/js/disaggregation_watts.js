/* disaggregation_watts.js: scaled model units -> watts with the checkpoint's scalers (capture meta.scalers),
 * the inverse of nilmbuild.data.preprocess scalers: max: z*max; standard: z*std+mean; minmax: z*(max-min)+min;
 * mean: z*mean. watts.inverse(scalerDict, Float32Array) -> new Float32Array (float64 arithmetic, as numpy).
 */
import { fmt } from "./core.js";

function affine(sc) {
  switch (sc && sc.kind) {
    case "max": return [sc.max, 0];
    case "standard": return [sc.std, sc.mean];
    case "minmax": return [sc.max - sc.min, sc.min];
    case "mean": return [sc.mean, 0];
    default: throw new Error("unknown scaler " + JSON.stringify(sc));
  }
}
export const watts = {
  inverse: function (sc, z) {
    var ab = affine(sc), out = new Float32Array(z.length);
    for (var i = 0; i < z.length; i++) out[i] = z[i] * ab[0] + ab[1];
    return out;
  },
  describe: function (sc) {
    var ab = affine(sc);
    return sc.kind + " scaler: W = z × " + fmt(ab[0], 6) + (ab[1] ? " + " + fmt(ab[1], 6) : "");
  },
  // (sample, device) slice of a (B, D, L) record -> Float32Array(L)
  row: function (cap, name, b, d) {
    var r = cap.record(name), D = r.shape[1], L = r.shape[2], a = cap.get(name);
    return a.subarray((b * D + d) * L, (b * D + d + 1) * L);
  },
};
export const phaseColors = { input: "#0072B2", embedding: "#E69F00", transformer: "#D55E00", conditioning: "#CC79A7", output: "#009E73" };
export const deviceColors = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7"];

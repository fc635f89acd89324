// node --test tests/js/: the arcs' endpoints are the largest weights of the row, largest first (ties: earlier key)
import { test } from "node:test";
import assert from "node:assert/strict";
import { attentionArcs } from "../../static/js/attention_arcs.js";

test("strongest keys: the k largest non-zero weights, largest first", () => {
  const w = new Float32Array([0.1, 0, 0.4, 0.05, 0.4, 0.05]);      // key 1 is the masked diagonal (exactly 0)
  const got = attentionArcs.strongest(w, 3);
  assert.deepEqual(got.map((a) => a.key), [2, 4, 0]);
  assert.equal(got[0].weight, w[2]);
  assert.deepEqual(attentionArcs.strongest(w, 10).map((a) => a.key), [2, 4, 0, 3, 5]);   // the zero is never an arc
});

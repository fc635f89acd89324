// node --test tests/js/: core.js inTasks (a page's start split into macrotasks)
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const C = await import(pathToFileURL(path.join(ROOT, "static", "js", "core.js")).href);

test("inTasks: steps in order, the first in the current task, each later one in a macrotask of its own", async () => {
  const order = [];
  setTimeout(() => order.push("timer queued before"), 0);
  const done = C.inTasks([
    () => { order.push(1); setTimeout(() => order.push("timer queued by step 1"), 0); },
    () => order.push(2),
    () => order.push(3),
  ]);
  await Promise.resolve();
  assert.deepEqual(order, [1]);  // step 1 ran before any queued task
  await done;
  assert.deepEqual(order, [1, "timer queued before", "timer queued by step 1", 2, 3]);
});

test("inTasks: the first exception goes to fail() and the later steps do not run", async () => {
  const root = { dataset: {} };
  const box = { hidden: true, textContent: "" };
  const events = [];
  globalThis.document = { documentElement: root, getElementById: () => box };
  globalThis.window = { dispatchEvent: (e) => events.push(e.type) };
  try {
    const order = [];
    await C.inTasks([() => order.push(1), () => { throw new Error("boom"); }, () => order.push(3)]);
    assert.deepEqual(order, [1]);
    assert.equal(root.dataset.ready, "error");
    assert.equal(box.textContent, "This view could not be shown: boom");
    assert.deepEqual(events, ["nilmbuild:error"]);
  } finally {
    delete globalThis.document;
    delete globalThis.window;
  }
});

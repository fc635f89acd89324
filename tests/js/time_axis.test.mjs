// time_axis.js: a window's steps in clock time (UTC), the helper behind every time axis over a window.
import { test } from "node:test";
import assert from "node:assert/strict";
import { stepTicks, stepTime, timeAxis, windowClock } from "../../static/js/time_axis.js";

test("windowClock reads the start in UTC however it is spelled", () => {
  const want = Date.UTC(2024, 5, 9, 16, 0);
  for (const s of ["2024-06-09T16:00:00", "2024-06-09T16:00:00Z", "2024-06-09 16:00", "2024-06-09T16:00", "2024-06-09 16:00 UTC"]) {
    assert.deepEqual(windowClock(s, 60), { start: want, per: 60000 }, s);
  }
});

test("stepTicks: whole clock steps at their step, labelled start + offset", () => {
  const c = windowClock("2024-06-09T16:07:00Z", 60); // a start off the hour: ticks at whole hours after it
  const ticks = stepTicks(c, 0, 479, 9);
  assert.deepEqual(ticks.map((k) => k.label), ["17:00", "18:00", "19:00", "20:00", "21:00", "22:00", "23:00", "00:00"]);
  assert.deepEqual(ticks.map((k) => k.step), [53, 113, 173, 233, 293, 353, 413, 473]);
  const zoom = stepTicks(c, 200, 240, 4); // a zoomed span: every 10 minutes inside it
  assert.deepEqual(zoom.map((k) => k.label), ["19:30", "19:40", "19:50", "20:00"]);
  assert.deepEqual(zoom.map((k) => k.step), [203, 213, 223, 233]);
  // a narrow axis asked for 2 ticks of 8 hours from 16:00 would get 6-hourly ones, one of them inside: it gets two
  const narrow = stepTicks(windowClock("2024-06-09T16:00:00Z", 60), 0, 479, 2);
  assert.deepEqual(narrow.map((k) => k.label), ["18:00", "21:00"]);
});

test("stepTime and timeAxis", () => {
  assert.equal(stepTime(windowClock("2024-06-09T16:00:00", 60), 95), "17:35 UTC");
  assert.equal(stepTime(windowClock("2024-06-09T23:59:00", 60), 2), "00:01 UTC");
  assert.equal(stepTime(windowClock("2024-06-09T16:00:00", 30), 3), "16:01:30 UTC"); // steps under a minute: seconds
  const ax = timeAxis("2024-06-09T16:00:00", 60, 480);
  assert.deepEqual([ax.min, ax.max, ax.unit, ax.readout, ax.clock.start], [0, 479, "UTC", "time", Date.UTC(2024, 5, 9, 16, 0)]);
});

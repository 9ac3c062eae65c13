// The phone Lighthouse judges Performance on (tests/lighthouse/device.mjs):
// on the host Lighthouse's 4x is calibrated for, its default slowdown; on
// any other, the slowdown that reaches the same phone.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_MULTIPLIER, PHONE_INDEX, REFERENCE_INDEX, SLOW_HOST_INDEX, multiplierFor } from "../lighthouse/device.mjs";

test("the reference host gets Lighthouse's own 4x, and the phone is a quarter of it", () => {
  assert.equal(DEFAULT_MULTIPLIER, 4);
  assert.equal(multiplierFor(REFERENCE_INDEX), 4);
  assert.equal(PHONE_INDEX, 500);
});

test("a slower host is slowed less and a faster one more, to the same phone", () => {
  assert.equal(multiplierFor(1000), 2);
  assert.equal(multiplierFor(1400), 2.8);
  assert.equal(multiplierFor(3000), 6);
  for (const index of [1000, 1458, 1915.5, 2053]) assert.ok(Math.abs(index / multiplierFor(index) - PHONE_INDEX) < 1, String(index));
});

test("a benchmark that measured nothing is refused, not turned into a slowdown", () => {
  for (const index of [0, -5, Number.NaN, undefined]) assert.throws(() => multiplierFor(index), /positive number/);
});

test("a host Lighthouse itself calls too slow is refused, not judged on a phone faster than itself", () => {
  assert.equal(SLOW_HOST_INDEX, 1000);
  assert.equal(multiplierFor(SLOW_HOST_INDEX), 2);
  for (const index of [999.5, 731, 400]) assert.throws(() => multiplierFor(index), /too slow for its scores/);
});

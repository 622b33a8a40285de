import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ExponentialBackoff, MaxOf, TokenBucket } from '../../src/runtime/rate-limit.js';

test('exponential backoff doubles per failure, caps, and resets on forget', () => {
  const backoff = new ExponentialBackoff(5, 1000);
  assert.deepEqual([1, 2, 3, 4, 5].map(() => backoff.when('a')), [5, 10, 20, 40, 80]);
  assert.equal(backoff.when('b'), 5, 'keys back off independently');
  for (let i = 0; i < 2000; i++) backoff.when('a');
  assert.equal(backoff.when('a'), 1000, 'capped, and finite after many failures');
  assert.equal(backoff.failures('a'), 2006);
  backoff.forget('a');
  assert.equal(backoff.failures('a'), 0);
  assert.equal(backoff.when('a'), 5);
});

test('token bucket allows a burst, then spaces keys at its rate, and refills with time', () => {
  let now = 0;
  const bucket = new TokenBucket(10, 3, () => now);
  assert.deepEqual([1, 2, 3].map(() => bucket.when()), [0, 0, 0]);
  assert.equal(bucket.when(), 100, 'the fourth waits one token at 10/s');
  assert.equal(bucket.when(), 200, 'reservations queue up behind each other');
  now = 10_000;
  assert.equal(bucket.when(), 0, 'refilled after a quiet period');
});

test('max-of takes the slowest limiter and forgets in all', () => {
  let now = 0;
  const limiter = new MaxOf(new ExponentialBackoff(1, 100), new TokenBucket(1, 1, () => now));
  assert.equal(limiter.when('k'), 1);
  assert.equal(limiter.when('k'), 1000, 'the bucket is slower than the backoff now');
  assert.equal(limiter.failures('k'), 2);
  limiter.forget('k');
  assert.equal(limiter.failures('k'), 0);
  now = 5000;
  assert.equal(limiter.when('k'), 1);
});

test('tryTake takes only free tokens and never goes into debt', () => {
  let now = 0;
  const bucket = new TokenBucket(1, 2, () => now);
  assert.deepEqual([bucket.tryTake(), bucket.tryTake(), bucket.tryTake(), bucket.tryTake()], [true, true, false, false]);
  now = 1000;
  assert.equal(bucket.tryTake(), true, 'one token back after a second, not less for the refused takes');
  assert.equal(bucket.tryTake(), false);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { microTime, rfc3339 } from '../../src/runtime/time.js';

test('lease timestamps are MicroTime: RFC 3339 with six fractional digits', () => {
  assert.equal(microTime(Date.UTC(2026, 10, 21, 23, 45, 5, 123)), '2026-11-21T23:45:05.123000Z');
});

test('condition and event timestamps are RFC 3339 to the second', () => {
  assert.equal(rfc3339(Date.UTC(2026, 10, 21, 23, 45, 5, 123)), '2026-11-21T23:45:05Z');
});

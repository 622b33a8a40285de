// Issue 34, what must show 2: the linearizability checker the fault tests rely on (lab/checker, porcupine) finds
// the anomalies it exists to find, planted in histories shaped like the recorded workload's: an acknowledged write
// lost (a later read returns the value before it), and a stale read served by a member cut off, read serializably,
// which is legal as a serializable read and an anomaly once taken for a linearizable one. (No cluster: the checker
// is one of the lab's builds.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkHistory } from '../support/linearizability.js';
import type { Operation } from '../support/history.js';

const ms = 1_000_000;
/** Three clients taking turns on key k and others, every answer in 10 ms; client 2's reads go to a member cut off since 200 ms. */
function history(): Operation[] {
  const ops: Operation[] = [];
  for (let i = 0; i < 60; i++) {
    const call = i * 20 * ms;
    const key = `k${i % 3}`;
    const client = i % 3;
    ops.push(i % 2 === 0
      ? { client, input: { f: 'put', key, value: `v${i}` }, call, return: call + 10 * ms, outcome: { type: 'ok', revision: 10 + i } }
      : { client, input: { f: 'get', key }, call, return: call + 10 * ms, outcome: { type: 'ok', value: lastPut(ops, key), revision: 10 + i } });
  }
  return ops;
}
const lastPut = (ops: readonly Operation[], key: string): string | null => {
  const put = ops.filter((o) => o.input.key === key && o.input.f === 'put').at(-1)?.input;
  return put?.f === 'put' ? put.value : null;
};

test('the checker finds an acknowledged write lost, and a stale read taken for a linearizable one; the recorded history as it was passes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'checker-negative-'));
  const clean = history();
  const ok = await checkHistory({ operations: clean }, dir, 'clean');
  assert.deepEqual([ok.result, ok.operations, ok.checked], ['ok', 60, 60]);

  // Lost: a read after the put of v40 answered, returning what k1 held before it.
  const lost = history();
  const read = lost.findIndex((o, i) => i > 40 && o.input.f === 'get' && o.input.key === 'k1');
  const before = lost.slice(0, 40).filter((o) => o.input.f === 'put' && o.input.key === 'k1').at(-1)?.input;
  assert.ok(read > 0 && before?.f === 'put');
  lost[read] = { ...lost[read] as Operation, outcome: { type: 'ok', value: before.value, revision: 60 } };
  const found = await checkHistory({ operations: lost }, dir, 'lost');
  assert.equal(found.result, 'illegal');
  assert.deepEqual(found.anomalies?.map((a) => a.key), ['k1']);
  assert.ok((found.anomalies ?? []).some((a) => a.operations.some((o) => o.input.f === 'get' && o.outcome.type === 'ok' && o.outcome.value === before.value)), 'the stale read is in the anomaly shown');
  assert.ok(found.visualization, 'a timeline written');

  // Stale: the cut-off member answers a serializable read with a value overwritten since. Legal as marked...
  const stale = history();
  stale.push({ client: 3, input: { f: 'get', key: 'k0', serializable: true }, call: 1100 * ms, return: 1105 * ms, outcome: { type: 'ok', value: 'v0', revision: 10 } });
  const marked = await checkHistory({ operations: stale }, dir, 'stale-serializable');
  assert.deepEqual([marked.result, marked.operations, marked.checked], ['ok', 61, 60]);
  // ...and an anomaly once the same read is taken for a linearizable one.
  const taken = stale.map((o) => (o.client === 3 ? { ...o, input: { f: 'get' as const, key: 'k0' } } : o));
  const staleFound = await checkHistory({ operations: taken }, dir, 'stale-linearizable');
  assert.equal(staleFound.result, 'illegal');
  assert.deepEqual(staleFound.anomalies?.map((a) => a.key), ['k0']);
});

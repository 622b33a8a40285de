// Issue 32, finding 11: the operator's /healthz checks more than that the process answers. A leader whose cache
// of pods can be neither listed nor watched (the API server answers nothing for them) is wedged: it would act on
// what it saw minutes ago. Its liveness probe must fail once the cache has not been known current for the stated
// bound (--stale-cache-after, 180 s unless set; 60 s here), naming the cache, and pass again once the cache is
// current; an always-200 /healthz fails this.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../support/lab.js';
import { testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { apiRelay } from '../support/api-relay.js';

/** The shortest bound the operator takes: a watch renews within 30 s, a failing list is retried within 45 s. */
const STALE_AFTER_S = 60;

test(`/healthz fails once the pods cache has not been current for ${STALE_AFTER_S} s, naming it, and passes again when the API answers`, async (t) => {
  const bed = await testbed(t, 'probe');
  const relay = await apiRelay(t);
  const operator = startOperator(t, bed.namespace, ['--stale-cache-after', String(STALE_AFTER_S)], relay.url);
  const healthz = (await operator.metricsUrl()).replace(/\/metrics$/, '/healthz');
  const probe = async (): Promise<{ code: number; body: string }> => {
    const res = await fetch(healthz, { signal: AbortSignal.timeout(5000) });
    return { code: res.status, body: await res.text() };
  };
  const synced = async (): Promise<boolean> => (await fetch(healthz.replace(/\/healthz$/, '/readyz'), { signal: AbortSignal.timeout(5000) })).status === 200;
  await eventually('the operator\'s caches synced and healthy', 60_000, async () => ((await synced()) && (await probe()).code === 200) || undefined);

  // Every list and watch of pods goes unanswered from now on; the rest of the API (its lease included) answers.
  const stalledAt = Date.now();
  relay.stall((method, path) => method === 'GET' && /\/pods(\?|$)/.test(path));
  const failed = await eventually('liveness failing on the stale cache', (STALE_AFTER_S + 120) * 1000, async () => {
    const p = await probe();
    return p.code === 500 ? p : undefined;
  });
  const afterS = (Date.now() - stalledAt) / 1000;
  t.diagnostic(`/healthz failed ${afterS.toFixed(1)} s after the pods stopped answering: ${failed.body}`);
  assert.match(failed.body, /caches not known current: .*\/pods/);
  // The cache was last known current up to one watch renewal (30 s) before the stall.
  assert.ok(afterS >= STALE_AFTER_S - 30, `not before the bound (${afterS.toFixed(1)} s)`);

  relay.heal();
  await eventually('healthy again once pods answer', 120_000, async () => ((await probe()).code === 200) || undefined);
  operator.succeeded();
});

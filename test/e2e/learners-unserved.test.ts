// Issue 32, finding 12: a member added as a learner answers etcd's health check but refuses most client requests.
// Its pod must stay out of the client Service's endpoints until it is a voter, or clients sent to it fail during
// every scale-up, replacement and roll.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1EndpointSlice } from '@kubernetes/client-node';
import { eventually } from '../support/lab.js';
import { testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { post } from '../support/etcd-gateway.js';

interface Listed { members?: { name?: string; peerURLs?: string[]; isLearner?: boolean }[] }

test('during a scale-up from 1 to 3, and while the operator is stopped with a learner added, no learner is a ready endpoint of the client Service; each member is, once a voter', async (t) => {
  const bed = await testbed(t, 'learners');
  let operator = startOperator(t, bed.namespace);
  // etcd 3.6, whose /health a learner passes as soon as it has caught up (3.5.17's fails it until promoted): the
  // probe of pods made before issue 33. Their /readyz fails a learner (3.5.19+), and the voter gate keeps it out too.
  await bed.create('grow', { size: 1, version: '3.6.5' });
  await eventually('one member settled', 120_000, () => bed.settledMembers('grow', 1));
  const [first] = await bed.pods('grow');
  const firstUrl = `http://${first?.status?.podIP ?? ''}:2379`;

  /** The member pods the client Service sends clients to now. */
  const served = async (): Promise<string[]> => {
    const slices = (await bed.transport.call('GET', `/apis/discovery.k8s.io/v1/namespaces/${bed.namespace}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dgrow-client`)) as { items: V1EndpointSlice[] };
    return slices.items.flatMap((s) => s.endpoints).filter((e) => e.conditions?.ready).map((e) => e.targetRef?.name ?? '');
  };
  /** The learners etcd lists, by member name (the pod's; a learner not yet started has only its peer URL). */
  const learners = async (): Promise<string[]> => {
    const listed = (await post(firstUrl, '/v3/cluster/member/list', {}, { timeoutMs: 2000 })) as Listed;
    return (listed.members ?? []).filter((m) => m.isLearner).map((m) => m.name || (m.peerURLs?.[0] ?? '').replace(/^https?:\/\//, '').split('.')[0] || '');
  };
  const seen = new Set<string>();
  const violations: string[] = [];
  const started = Date.now();
  /** Samples both, four times a second, until `done` or `ms` pass. */
  const sample = async (ms: number, done: (learning: string[], serving: string[]) => Promise<boolean>): Promise<void> => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      const [l, s] = await Promise.all([learners().catch(() => []), served()]);
      l.forEach((n) => seen.add(n));
      for (const n of l.filter((x) => s.includes(x))) violations.push(`${((Date.now() - started) / 1000).toFixed(1)} s: learner ${n} is a ready endpoint`);
      if (await done(l, s)) return;
      await new Promise((r) => setTimeout(r, 250));
    }
  };

  await bed.patchSpec('grow', { size: 3 });
  // A learner added, then the operator stopped before it can promote it (a crash mid-scale): the learner stays one.
  await sample(120_000, (l) => Promise.resolve(l.length > 0));
  assert.ok(seen.size > 0, 'a learner was added');
  await operator.stop();
  await sample(20_000, () => Promise.resolve(false));
  operator = startOperator(t, bed.namespace);
  await sample(240_000, async (l, s) => s.length === 3 && l.length === 0 && (await bed.settledMembers('grow', 3)) !== undefined);
  t.diagnostic(`learners seen: ${[...seen].join(', ')}; served at the end: ${(await served()).join(', ')}`);
  assert.ok(seen.size >= 2, 'both new members were seen as learners (the check was not empty)');
  assert.deepEqual(violations.slice(0, 5), [], 'no learner behind the client Service');
  assert.deepEqual((await served()).sort(), (await bed.pods('grow')).map((p) => p.metadata?.name ?? '').sort(), 'every member served once a voter');
  operator.succeeded();
});

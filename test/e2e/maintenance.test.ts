import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_ETCD_VERSION } from '../../src/api/etcd-cluster.js';
import type { EtcdCluster } from '../../src/api/etcd-cluster.js';
import { eventually } from '../support/lab.js';
import { testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { etcdDeletePrefix, etcdGet, etcdPut } from '../support/etcd-gateway.js';
import { fillQuota, fillUntilQuotaFull } from '../support/quota.js';

test('NOSPACE: a filled quota is recovered (compact, defragment each member, disarm) and writes work again; member reports are in status', async (t) => {
  const bed = await testbed(t, 'nospace');
  const operator = startOperator(t, bed.namespace);
  await bed.create('full', { size: 3, quotaBackendBytes: 4 * 1024 * 1024 });
  const running = await eventually('3 members Running', 120_000, async () => {
    const c = await bed.get('full');
    return c.status?.phase === 'Running' && c.status.readyMembers === 3 && c.status.memberStatus?.length === 3 ? c : undefined;
  });
  const reports = running.status?.memberStatus ?? [];
  assert.equal(reports.filter((m) => m.isLeader).length, 1, 'one leader among the member reports');
  assert.ok(reports.every((m) => (m.dbSize ?? 0) > 0 && (m.raftIndex ?? 0) > 0 && m.version === DEFAULT_ETCD_VERSION));

  const ip = (await bed.core.readNamespacedService({ name: 'full-client', namespace: bed.namespace })).spec?.clusterIP ?? '';
  const endpoint = `http://${ip}:2379`;
  await eventually('a first write', 30_000, async () => (await etcdPut(endpoint, 'kept', 'yes')) > 0 || undefined);
  // Overwrite one key until the history fills the quota: compaction can free all of it.
  await fillQuota(endpoint, () => 'filler', 256 * 1024, 200);
  const started = Date.now();
  // Recovered means disarmed: a status from before the operator's next look at etcd shows no alarm and no recovery
  // either, and read as recovered it left this test waiting for writes through the whole of that look's interval.
  const recovered = await eventually('NOSPACE recovered', 120_000, async () => {
    const c: EtcdCluster = await bed.get('full');
    const degraded = c.status?.conditions?.find((x) => x.type === 'Degraded');
    return c.status?.alarms?.length === 0 && degraded?.status === 'False' && c.status.noSpaceRecovery === undefined && c.status.noSpaceDisarmedAt !== undefined ? c : undefined;
  });
  await eventually('writes accepted again', 30_000, async () => (await etcdPut(endpoint, 'after', 'recovery')) > 0 || undefined);
  t.diagnostic(`NOSPACE recovered ${Date.now() - started} ms after the refusal`);
  assert.equal(await etcdGet(endpoint, 'kept'), 'yes', 'the live data survived the compaction');
  // The operator records each step's Event after its status write: the last one may follow the status seen.
  const events = await eventually('the Event of the disarm', 30_000, async () => {
    const all = (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items.filter((e) => e.involvedObject.name === 'full');
    return all.some((e) => e.reason === 'DisarmAlarms') ? all : undefined;
  });
  const count = (reason: string): number => events.filter((e) => e.reason === reason).reduce((n, e) => n + (e.count ?? 1), 0);
  assert.equal(count('Compact'), 1, 'compacted once');
  assert.equal(count('Defragment'), 3, 'each member defragmented once');
  assert.equal(count('DisarmAlarms'), 1, 'disarmed once');
  assert.ok(recovered.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True'));
  operator.succeeded();
});

test('NOSPACE with live data filling the quota waits for a person; once they delete keys, the operator compacts and defragments again and disarms', async (t) => {
  const bed = await testbed(t, 'nospace-full');
  const operator = startOperator(t, bed.namespace);
  await bed.create('full', { size: 1, quotaBackendBytes: 1024 * 1024 });
  await eventually('1 member settled', 120_000, () => bed.settledMembers('full', 1));
  const endpoint = await bed.clientEndpoint('full');
  await eventually('a first write', 30_000, async () => (await etcdPut(endpoint, 'kept', 'yes')) > 0 || undefined);
  // Distinct keys: live data, which no compaction frees. The operator's recovery (compact, defragment, look)
  // finds the data fills the quota still: NOSPACE stays raised, and a person is told.
  await fillUntilQuotaFull(bed, 'full', endpoint, 'fill/', 240_000);
  const held = (await bed.get('full')).status;
  assert.ok(held);
  assert.equal(held.noSpaceRecovery?.defragmented?.length, 1);
  assert.ok((held.alarms ?? []).some((a) => a.alarm === 'NOSPACE'));
  t.diagnostic(`told: ${held.conditions?.find((x) => x.reason === 'QuotaFull')?.message ?? ''}`);
  const compactedAt = held.noSpaceRecovery.compactedRevision ?? 0;
  // A person frees space the only way etcd allows past its quota: deletes. Their history holds the space until compacted.
  assert.ok(await etcdDeletePrefix(endpoint, 'fill/') > 0);
  const deletedAt = Date.now();
  let last = '';
  await eventually('NOSPACE recovered after the deletes', 120_000, async () => {
    const c = await bed.get('full');
    last = JSON.stringify({ alarms: c.status?.alarms, recovery: c.status?.noSpaceRecovery, db: c.status?.memberStatus?.map((m) => m.dbSize) });
    return (c.status?.alarms ?? []).length === 0 && c.status?.noSpaceRecovery === undefined ? true : undefined;
  }, () => last);
  await eventually('writes accepted again', 30_000, async () => (await etcdPut(endpoint, 'after', 'recovery')) > 0 || undefined);
  t.diagnostic(`recovered ${Date.now() - deletedAt} ms after the deletes (first compaction at revision ${compactedAt})`);
  assert.equal(await etcdGet(endpoint, 'kept'), 'yes');
  // Each recovery compacted once; the last one twice: again after the deletes.
  const events = (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items.filter((e) => e.involvedObject.name === 'full');
  const count = (reason: string): number => events.filter((e) => e.reason === reason).reduce((n, e) => n + (e.count ?? 1), 0);
  assert.equal(count('Compact'), count('DisarmAlarms') + 1, 'compacted once more, after the deletes');
  operator.succeeded();
});

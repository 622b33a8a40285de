// lab: late — needs the CSI resizer, built behind a first lab.
// Issue 33: a larger storage request grows every member's claim where the StorageClass allows it, online, under
// real clients' writes, nothing restarted (the lab's `expandable` class); where it does not (local-path has no
// allowVolumeExpansion), the cluster says so and what to do, touching nothing, and the request can be taken back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statfs } from 'node:fs/promises';
import { csiVolumeMount, eventually, expandableStorageClass } from '../support/lab.js';
import { testbed } from '../support/cluster-testbed.js';
import type { Testbed } from '../support/cluster-testbed.js';
import type { Condition } from '../../src/api/etcd-cluster.js';
import { startOperator } from '../support/operator-process.js';
import { loadedCluster } from '../support/write-load.js';
import { checkLoad } from '../support/load-check.js';
import { etcdRangeAll } from '../support/etcd-gateway.js';
import { bigValue, deletePrefix, firstDifference, guardedUpdate, leasedKeys, modelKeys, putAll, recordSource, startClients } from '../support/real-workload.js';
import { ApiError } from '../../src/runtime/transport.js';

const GiB = 1024 ** 3;

/**
 * The VolumeGrowth condition of the cluster `grown` once it has `reason`, each one seen on the way told to `seen`.
 * (`what` names the wait in a timeout.)
 */
const growthReaches = (bed: Testbed, what: string, reason: string, timeoutMs: number, seen: (reason: string) => void = () => undefined): Promise<Condition> =>
  eventually(what, timeoutMs, async () => {
    const c = (await bed.get('grown')).status?.conditions?.find((x) => x.type === 'VolumeGrowth');
    if (c?.reason) seen(c.reason);
    return c?.reason === reason ? c : undefined;
  });

test('a storage request raised beyond what the StorageClass can grow: VolumeGrowth ExpansionRefused with the API server\'s words and a Warning; claims and members untouched', async (t) => {
  const bed = await testbed(t, 'grow');
  const operator = startOperator(t, bed.namespace);
  const volume = (storage: string) => ({ persistentVolumeClaimSpec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } });
  await bed.create('grown', { size: 3, pod: volume('1Gi') });
  const members = await eventually('3 members settled', 180_000, () => bed.settledMembers('grown', 3));
  const uids = (await bed.pods('grown')).map((p) => p.metadata?.uid).sort();
  await bed.patchSpec('grown', { pod: volume('2Gi') });
  const refused = await growthReaches(bed, 'VolumeGrowth ExpansionRefused', 'ExpansionRefused', 60_000);
  assert.equal(refused.status, 'False');
  assert.match(refused.message ?? '', new RegExp(`^claims ${members.join(', ')} cannot grow to 2Gi: .*resize.*allowVolumeExpansion: true`));
  const claims = (await bed.core.listNamespacedPersistentVolumeClaim({ namespace: bed.namespace })).items;
  assert.deepEqual(claims.map((c) => c.spec?.resources?.requests?.['storage']), ['1Gi', '1Gi', '1Gi'], 'no claim changed');
  assert.deepEqual((await bed.pods('grown')).map((p) => p.metadata?.uid).sort(), uids, 'no member restarted');
  const events = (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items;
  assert.ok(events.some((e) => e.reason === 'ExpansionRefused' && e.type === 'Warning'), 'a Warning Event says so');
  // The claims kept their size: the raise can be taken back (user trial F2), but not below them.
  assert.equal((await bed.get('grown')).status?.claimedStorage, '1Gi');
  const below = await bed.patchSpec('grown', { pod: volume('512Mi') }).then(() => undefined, (e: unknown) => e);
  assert.ok(below instanceof ApiError && /cannot go below 1Gi, what the members' claims hold/.test(below.message), `512Mi was not refused: ${String(below)}`);
  await bed.patchSpec('grown', { pod: volume('1Gi') });
  const settled = await growthReaches(bed, 'VolumeGrowth at the requested size again', 'AtRequestedSize', 60_000);
  assert.equal(settled.status, 'True');
  operator.succeeded();
});

test('a storage request raised from 1Gi to 2Gi grows every member\'s volume online under real clients\' writes: no member restarted, the file systems 2 GiB in the pods, every key as the recorded model has it; a growth to 20Ti the volumes cannot make is ExpansionFailed and cancelled by taking the request back', async (t) => {
  const bed = await testbed(t, 'growon');
  const operator = startOperator(t, bed.namespace);
  const storageClassName = await expandableStorageClass();
  const volume = (storage: string) => ({ persistentVolumeClaimSpec: { storageClassName, accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } });
  const { endpoint, load } = await loadedCluster(bed, 'grown', { size: 3, pod: volume('1Gi') }, 240_000, { recorded: true });
  const model = recordSource(endpoint);
  bed.after(() => { model.stop(); });
  // Data as real clients keep it: a lease shared by 100 keys, a 200-key prefix deleted at one revision, guarded
  // updates racing, values near 1 MiB; the clients go on while the volumes grow.
  const leased = await leasedKeys(endpoint, 30, Array.from({ length: 100 }, (_, i) => [`/registry/leases/l-${String(i).padStart(3, '0')}`, `held ${i}`]));
  bed.after(() => { leased.letExpire(); });
  await putAll(endpoint, Array.from({ length: 200 }, (_, i) => [`/registry/configmaps/gone/cm-${String(i).padStart(3, '0')}`, `data ${i}`]));
  assert.equal((await deletePrefix(endpoint, '/registry/configmaps/gone/')).deleted, 200);
  for (let i = 0; i < 2; i++) await guardedUpdate(endpoint, `/registry/configmaps/big/cm-${i}`, () => bigValue(900 * 1024, `big-${i}`));
  const clients = startClients(endpoint, '/registry/load/');
  bed.after(async () => { await clients.stop(); });
  const pods = await bed.pods('grown');
  const uids = pods.map((p) => p.metadata?.uid).sort();
  // The clients write for a while before the growth and after it, not only during its second or two.
  const writing = (): Promise<void> => new Promise((r) => setTimeout(r, 10_000));
  await writing();

  const started = Date.now();
  await bed.patchSpec('grown', { pod: volume('2Gi') });
  const reasons = new Set<string>();
  await growthReaches(bed, 'every claim grown to 2Gi', 'AtRequestedSize', 300_000, (r) => reasons.add(r));
  const seconds = (Date.now() - started) / 1000;
  assert.ok(!reasons.has('FileSystemResizePending') && !reasons.has('ExpansionRefused'), `no restart asked for, nothing refused: ${[...reasons].join(', ')}`);
  // Grown in the pods, not only on paper: each member's mounted file system (statfs on its node) is about 2 GiB.
  const sizes: number[] = [];
  for (const p of await bed.pods('grown')) {
    const claim = p.spec?.volumes?.find((v) => v.persistentVolumeClaim)?.persistentVolumeClaim?.claimName ?? '';
    const pvc = await bed.core.readNamespacedPersistentVolumeClaim({ name: claim, namespace: bed.namespace });
    assert.equal(pvc.status?.capacity?.['storage'], '2Gi', `${claim}: ${JSON.stringify(pvc.status)}`);
    const fs = await statfs(csiVolumeMount(p.spec?.nodeName ?? '', p.metadata?.uid ?? '', pvc.spec?.volumeName ?? ''));
    sizes.push((fs.blocks * fs.bsize) / GiB);
  }
  assert.ok(sizes.length === 3 && sizes.every((g) => g > 1.9 && g <= 2), `file systems of about 2 GiB: ${sizes.join(', ')}`);
  assert.deepEqual((await bed.pods('grown')).map((p) => p.metadata?.uid).sort(), uids, 'no member restarted');
  assert.equal((await bed.get('grown')).status?.claimedStorage, '2Gi');
  const shrink = await bed.patchSpec('grown', { pod: volume('1Gi') }).then(() => undefined, (e: unknown) => e);
  assert.ok(shrink instanceof ApiError, 'back to 1Gi after the claims grew was accepted');
  assert.match(shrink.message, /spec\.pod\.persistentVolumeClaimSpec\.resources\.requests\.storage.*cannot go below 2Gi/, 'the field and the floor named');

  // A growth the volumes cannot make (the node's disk cannot hold a 20Ti image): said so, nothing restarted, and
  // cancelled by taking the request back to more than they hold, which then grows them to that.
  await bed.patchSpec('grown', { pod: volume('20Ti') });
  const failed = await growthReaches(bed, 'VolumeGrowth ExpansionFailed', 'ExpansionFailed', 300_000);
  assert.match(failed.message ?? '', /could not grow to 20Ti: .*set the storage request back to more than 2Gi/);
  await bed.patchSpec('grown', { pod: volume('3Gi') });
  await growthReaches(bed, 'the growth cancelled: every claim at 3Gi', 'AtRequestedSize', 300_000);
  const claims = (await bed.core.listNamespacedPersistentVolumeClaim({ namespace: bed.namespace })).items;
  assert.deepEqual(claims.map((c) => [c.spec?.resources?.requests?.['storage'], c.status?.capacity?.['storage']]), [['3Gi', '3Gi'], ['3Gi', '3Gi'], ['3Gi', '3Gi']]);
  assert.deepEqual((await bed.pods('grown')).map((p) => p.metadata?.uid).sort(), uids, 'still no member restarted');

  await writing();
  const written = await clients.stop();
  checkLoad(t, 'through the growth', await load.finish());
  const { revision, kvs } = await etcdRangeAll(endpoint);
  await model.through(revision);
  assert.equal(firstDifference(kvs, modelKeys(model, revision)), undefined, 'every key, value, version and revision as the recorded model has them');
  t.diagnostic(`grown 1Gi → 2Gi in ${seconds.toFixed(1)} s (file systems ${sizes.map((g) => g.toFixed(2)).join(', ')} GiB), conditions ${[...reasons].join(' → ')}; clients wrote ${JSON.stringify(written)}; ${kvs.length} keys equal at revision ${revision}`);
  operator.succeeded();
});

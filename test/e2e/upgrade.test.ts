import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EtcdCluster } from '../../src/api/etcd-cluster.js';
import { eventually } from '../support/lab.js';
import { isReady, ON_VOLUMES, testbed } from '../support/cluster-testbed.js';
import type { Testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { checkedLoad, untilServing } from '../support/write-load.js';
import { checkLoad } from '../support/load-check.js';

const versionOf = (p: { metadata?: { annotations?: Record<string, string> } }): string | undefined => p.metadata?.annotations?.['etcd.version'];
const imageOf = (p: { spec?: { containers: { image?: string }[] } }): string | undefined => p.spec?.containers[0]?.image;

/** Every member on `version`, ready, the cluster Running and reporting it. */
const rolledTo = (bed: Testbed, name: string, size: number, version: string) => async (): Promise<EtcdCluster | undefined> => {
  const c = await bed.get(name);
  const pods = await bed.pods(name);
  return c.status?.phase === 'Running' && c.status.currentVersion === version && c.status.readyMembers === size && c.status.size === size
    && pods.length === size && pods.every((p) => isReady(p) && versionOf(p) === version && imageOf(p) === `quay.io/coreos/etcd:v${version}`) ? c : undefined;
};



const refusal = (c: EtcdCluster) => c.status?.conditions?.find((x) => x.type === 'UpgradeRefused');

test('rolling upgrade on volumes, 3.5.17 → 3.5.35 → 3.6.5, then down to 3.5.35 through etcd\'s downgrade API and back, under write load; a too-early minor upgrade is refused, touching nothing', async (t) => {
  const bed = await testbed(t, 'upgrade');
  const operator = startOperator(t, bed.namespace);
  await bed.create('up', { size: 3, version: '3.5.17', pod: ON_VOLUMES });
  await eventually('3 members on 3.5.17', 120_000, rolledTo(bed, 'up', 3, '3.5.17'));
  const endpoint = await bed.clientEndpoint('up');
  await untilServing(endpoint);
  const load = checkedLoad(bed, endpoint, 'up');

  // etcd asks for 3.5.32+ before 3.6: refused with a condition and an event, and no pod touched.
  const uidsBefore = (await bed.pods('up')).map((p) => p.metadata?.uid).sort();
  const namesBefore = (await bed.pods('up')).map((p) => p.metadata?.name).sort();
  await bed.patchSpec('up', { version: '3.6.5' });
  const refused = await eventually('the upgrade refused', 30_000, async () => {
    const c = await bed.get('up');
    return refusal(c)?.status === 'True' ? c : undefined;
  });
  assert.equal(refusal(refused)?.reason, 'PatchTooOld');
  assert.deepEqual([refused.status?.currentVersion, refused.status?.targetVersion], ['3.5.17', '3.6.5']);
  await new Promise((r) => setTimeout(r, 3000));
  assert.deepEqual((await bed.pods('up')).map((p) => p.metadata?.uid).sort(), uidsBefore, 'no pod was touched');
  const events = (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items;
  assert.ok(events.some((e) => e.reason === 'UpgradeRefused' && e.type === 'Warning'), 'a Warning event says so');

  let started = Date.now();
  await bed.patchSpec('up', { version: '3.5.35' });
  await eventually('upgrading', 30_000, async () => ((await bed.get('up')).status?.phase === 'Upgrading' ? true : undefined));
  await eventually('3 members on 3.5.35', 240_000, rolledTo(bed, 'up', 3, '3.5.35'));
  const patchMs = Date.now() - started;
  started = Date.now();
  await bed.patchSpec('up', { version: '3.6.5' });
  const upgraded = await eventually('3 members on 3.6.5', 240_000, rolledTo(bed, 'up', 3, '3.6.5'));
  const minorMs = Date.now() - started;
  assert.equal(refusal(upgraded)?.status, 'False');
  const report = await load.finish();
  t.diagnostic(`patch upgrade 3.5.17→3.5.35 took ${patchMs} ms, minor upgrade 3.5.35→3.6.5 took ${minorMs} ms`);
  checkLoad(t, 'upgrades on volumes', report);
  assert.deepEqual((await bed.pods('up')).map((p) => p.metadata?.name).sort(), namesBefore, 'the same members, restarted on their data');

  // One minor down through etcd's downgrade API, and back up, under writes: the same members on their data.
  const again = checkedLoad(bed, endpoint, 'down', 'down-');
  started = Date.now();
  await bed.patchSpec('up', { version: '3.5.35' });
  const downgraded = await eventually('3 members down on 3.5.35', 300_000, rolledTo(bed, 'up', 3, '3.5.35'));
  const downMs = Date.now() - started;
  assert.equal(refusal(downgraded)?.status, 'False');
  started = Date.now();
  await bed.patchSpec('up', { version: '3.6.5' });
  await eventually('3 members back on 3.6.5', 300_000, rolledTo(bed, 'up', 3, '3.6.5'));
  t.diagnostic(`minor downgrade 3.6.5→3.5.35 took ${downMs} ms, back up to 3.6.5 ${Date.now() - started} ms`);
  checkLoad(t, 'downgrade and back on volumes', await again.finish());
  assert.deepEqual((await bed.pods('up')).map((p) => p.metadata?.name).sort(), namesBefore, 'the same members throughout');
  const told = (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items.filter((e) => e.reason === 'EnableDowngrade');
  assert.ok(told.length >= 1 && told.every((e) => e.type === 'Normal'), 'an Event says etcd was asked to downgrade');
  operator.succeeded();
});

test('rolling upgrade without volumes replaces each member, adding its successor first, under write load', async (t) => {
  const bed = await testbed(t, 'surge');
  const operator = startOperator(t, bed.namespace);
  await bed.create('surge', { size: 3, version: '3.5.35' });
  await eventually('3 members on 3.5.35', 120_000, rolledTo(bed, 'surge', 3, '3.5.35'));
  const original = (await bed.pods('surge')).map((p) => p.metadata?.name ?? '');
  const endpoint = await bed.clientEndpoint('surge');
  await untilServing(endpoint);
  const load = checkedLoad(bed, endpoint, 'surge');
  const started = Date.now();
  await bed.patchSpec('surge', { version: '3.6.5' });
  await eventually('3 members on 3.6.5', 300_000, rolledTo(bed, 'surge', 3, '3.6.5'));
  t.diagnostic(`3.5.35→3.6.5 by replacement took ${Date.now() - started} ms`);
  checkLoad(t, 'upgrade by replacement', await load.finish());
  const now = (await bed.pods('surge')).map((p) => p.metadata?.name ?? '');
  assert.deepEqual(now.filter((n) => original.includes(n)), [], 'every member was replaced');
  operator.succeeded();
});

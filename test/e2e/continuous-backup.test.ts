// Issue 19, items 1 and 2: a continuous backup keeps every revision across an operator restart, a leader
// change and a compaction, with its RPO under 10 s; a gap it cannot avoid is detected and reported; a
// point-in-time restore to three revisions yields exactly the source's data at each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EtcdBackup, EtcdRestore, RestoreSpec } from '../../src/api/etcd-backup.js';
import { eventually } from '../support/lab.js';
import { loggedAt, startOperator } from '../support/operator-process.js';
import type { LogEntry, TestOperator } from '../support/operator-process.js';
import { etcdCompact, etcdMoveLeader, etcdPut, etcdRangeAll, etcdStatus } from '../support/etcd-gateway.js';
import type { StoredKey } from '../support/etcd-gateway.js';
import { storedKeys } from '../support/minio.js';
import { startWriteLoad } from '../support/write-load.js';
import { DeleteObjectsCommand } from '@aws-sdk/client-s3';
import { changeLogPrefix, chunksOf } from '../../src/storage/change-log.js';
import { backupBed, createBackup, createRestore, getBackup, getRestore, restoreEnded, restoreToEnd } from '../support/backup-bed.js';

/** The Prometheus sample of `metric` for the backup, or undefined. */
async function sample(operator: TestOperator, metric: string, backup: string): Promise<number | undefined> {
  const text = await (await fetch(await operator.metricsUrl())).text();
  const line = text.split('\n').find((l) => l.startsWith(`${metric}{`) && l.includes(`backup="${backup}"`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

test('a continuous backup keeps every revision through an operator restart (its RPO honest across it), a leader change and a compaction (RPO < 10 s); a gap is reported; restores to three revisions hold exactly the source\'s data', async (t) => {
  const { bed, minio, members, ...started } = await backupBed(t, 'pitr', 3);
  let { operator } = started;
  const s3 = { path: 'backups/src.db', awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true };
  const logCondition = (b: EtcdBackup) => b.status?.conditions?.find((c) => c.type === 'ChangeLog');

  const memberUrls = members.map((p) => `http://${p.status?.podIP ?? ''}:2379`);
  const endpoint = await bed.clientEndpoint('src');
  // Some 10 writes a second: enough for an RPO under load, and every revision is replayed three times over below.
  const load = startWriteLoad(endpoint, 'w-', { pauseMs: 100 });
  // Stopped however the test ends: a failure before its finish() would leave it writing, holding the file open.
  bed.after(() => load.stop());

  await createBackup(bed, 'src', { clusterName: 'src', storageType: 'S3', s3, compression: 'Brotli', backupPolicy: { backupIntervalInSecond: 3600 }, continuous: { chunkSeconds: 2 } });
  await eventually('the change log following', 90_000, async () => (logCondition(await getBackup(bed, 'src'))?.status === 'True' ? true : undefined));

  // The store as it was at a revision, read from the source before anything compacts it.
  const points: { revision: number; kvs: StoredKey[] }[] = [];
  const mark = async (): Promise<void> => {
    const revision = await etcdPut(endpoint, `mark-${points.length}`, `at-${Date.now()}`);
    points.push({ revision, kvs: (await etcdRangeAll(endpoint, revision)).kvs });
  };
  const rpo: number[] = [];
  /** A sample a second (undefined while the metric is absent), kept in `into`. */
  const watchRpo = async (seconds: number, into: (number | undefined)[] = rpo): Promise<void> => {
    for (let i = 0; i < seconds; i++) {
      const value = await sample(operator, 'etcd_operator_changelog_rpo_seconds', 'src');
      if (value !== undefined || into !== rpo) into.push(value);
      await new Promise((r) => setTimeout(r, 1000));
    }
  };
  await watchRpo(10);
  await mark();

  // An operator restart: writes go on while none runs; the log resumes from its last chunk.
  operator.succeeded();
  await operator.stop();
  await new Promise((r) => setTimeout(r, 8000));
  operator = startOperator(t, bed.namespace);
  // Honest across the restart: the metric is there at once, from the stored log, and says the log is at least the
  // restart behind; then it comes back under 10 s as the log catches up.
  const afterRestart: (number | undefined)[] = [];
  await watchRpo(15, afterRestart);
  t.diagnostic(`RPO after the restart: ${afterRestart.map((v) => v?.toFixed(1) ?? '-').join(' ')}`);
  const first = afterRestart.find((v) => v !== undefined);
  assert.ok(first !== undefined && first >= 8, `the RPO right after the restart covers the 8 s without an operator: ${afterRestart.join(', ')}`);
  assert.ok(afterRestart.slice(3).every((v) => v !== undefined), `the RPO there from the operator's first seconds on: ${afterRestart.join(', ')}`);
  assert.ok((afterRestart.at(-1) ?? Infinity) < 10, `back under 10 s: ${afterRestart.join(', ')}`);
  await mark();

  // A leader change, then a compaction of revisions the log already holds.
  const statuses = await Promise.all(memberUrls.map((u) => etcdStatus(u)));
  const leader = statuses.findIndex((s) => s.memberId === s.leaderId);
  const target = statuses.find((s) => s.memberId !== s.leaderId);
  assert.ok(leader >= 0 && target, 'a leader and a follower');
  await etcdMoveLeader(memberUrls[leader] ?? '', target.memberId);
  await watchRpo(5);
  const { revision: before } = await etcdStatus(endpoint);
  await eventually('the log past the compaction point', 30_000, async () => ((((await getBackup(bed, 'src')).status?.changeLog?.throughRevision ?? 0) > before) ? true : undefined));
  await etcdCompact(endpoint, before);
  await watchRpo(10);
  await mark();
  const report = await load.finish();
  assert.equal(report.lost.length, 0, 'no acknowledged write lost');

  const last = points[points.length - 1]?.revision ?? 0;
  const followed = await eventually('the log through the last mark', 30_000, async () => {
    const b = await getBackup(bed, 'src');
    return (b.status?.changeLog?.throughRevision ?? 0) >= last ? b : undefined;
  });
  assert.equal(followed.status?.changeLog?.gaps, undefined, `no gap: ${JSON.stringify(followed.status?.changeLog)}`);
  assert.equal(logCondition(followed)?.status, 'True', JSON.stringify(logCondition(followed)));
  const worst = Math.max(...rpo);
  t.diagnostic(`RPO over ${rpo.length} samples under ${report.acknowledged} writes: median ${rpo.sort((a, b) => a - b)[Math.floor(rpo.length / 2)]?.toFixed(1)} s, worst ${worst.toFixed(1)} s; status rpoSeconds ${followed.status?.changeLog?.rpoSeconds}`);
  // Outside the restart (sampled on its own above): a sample a second for 25 s.
  assert.ok(rpo.length >= 20 && worst < 10, `RPO under 10 s (${rpo.join(', ')})`);

  // Point-in-time restores to the three marks, at once: each store must equal the source's at its revision.
  const restoreTo = (name: string, revision: number): Promise<EtcdRestore> => {
    // The source's revision numbers kept, to compare revision for revision.
    const spec: RestoreSpec = { etcdCluster: { name }, backupStorageType: 'S3', s3, pointInTime: { revision }, revisionBump: 0, clusterSpec: { size: 1 } };
    return restoreToEnd(bed, name, spec, 240_000);
  };
  const restored = await Promise.all(points.map((p, i) => restoreTo(`at-${i}`, p.revision)));
  for (const [i, r] of restored.entries()) {
    const point = points[i];
    assert.ok(point);
    assert.equal(r.status?.phase, 'Completed', JSON.stringify(r.status));
    assert.equal(r.status.pointInTime?.replayedThrough, point.revision);
    const held = await etcdRangeAll(await bed.clientEndpoint(`at-${i}`));
    assert.equal(held.revision, point.revision, `at-${i}: the store is at the revision asked for`);
    assert.deepEqual(held.kvs, point.kvs, `at-${i}: every key, value, version and revision as the source had them at ${point.revision}`);
    t.diagnostic(`at-${i}: revision ${point.revision}, ${held.kvs.length} keys equal; from ${r.status.pointInTime.snapshot} (revision ${r.status.pointInTime.snapshotRevision})`);
  }

  // A write into a cluster while its log is replayed spoils the replay, and the restore says so rather than
  // claiming the source's data: the next revision lands one later than the source's. (Its client Service is not
  // made until the replay is through: the intruder writes to the member itself.)
  const last3 = points[points.length - 1]?.revision ?? 0;
  const spoiling = restoreTo('spoiled', last3);
  const intruded = await eventually('the replay under way', 240_000, async () => {
    const cluster = await bed.get('spoiled').catch(() => undefined);
    if (!cluster?.status?.bootstrapped) return undefined;
    assert.equal(await bed.clientEndpoint('spoiled').then(() => 'made', () => 'none'), 'none', 'no client Service while the log is replayed');
    const member = (await bed.pods('spoiled')).find((p) => p.status?.podIP && !p.metadata?.deletionTimestamp);
    if (!member) return undefined;
    const endpoint = `http://${member.status?.podIP ?? ''}:2379`;
    const { revision } = await etcdStatus(endpoint, { timeoutMs: 1000 }).catch(() => ({ revision: 0 }));
    if (revision <= (points[0]?.revision ?? 0) || revision >= last3) return undefined;
    return etcdPut(endpoint, 'intruder', 'x', { timeoutMs: 1000 }).catch(() => undefined);
  });
  const spoiled = await spoiling;
  assert.deepEqual([spoiled.status?.phase, spoiled.status?.reason], ['Failed', 'WrittenDuringRestore'], JSON.stringify(spoiled.status));
  t.diagnostic(`a write at revision ${intruded} during the replay: ${spoiled.status?.conditions?.[0]?.message}`);

  // A gap that cannot be avoided: with no operator running, etcd compacts past the log's end. (Nothing
  // writes now, so the status holds the log's end.)
  const storedBefore = (await getBackup(bed, 'src')).status?.changeLog?.throughRevision ?? 0;
  operator.succeeded();
  await operator.stop();
  for (let i = 0; i < 50; i++) await etcdPut(endpoint, `gap-${i}`, 'x');
  const { revision: compactedTo } = await etcdStatus(endpoint);
  await etcdCompact(endpoint, compactedTo);
  operator = startOperator(t, bed.namespace);
  const gapped = await eventually('the gap reported', 60_000, async () => {
    const b = await getBackup(bed, 'src');
    return b.status?.changeLog?.gaps?.length ? b : undefined;
  });
  const gap = gapped.status?.changeLog?.gaps?.[0];
  // From the first revision not stored when the operator stopped, to the last one etcd compacted away.
  assert.ok(gap && gap.from === storedBefore + 1 && gap.to === compactedTo - 1,
    `${compactedTo}: ${JSON.stringify(gapped.status?.changeLog)}`);
  const warned = (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items.filter((e) => e.reason === 'ChangeLogGap');
  assert.equal(warned.length, 1, 'one Warning Event for the gap');
  // A full snapshot after the gap starts the log again, with nothing written since: etcd (3.5.35) answers no progress
  // request of a watch from past its revision, and a log that waited on one never resumed on an idle cluster.
  const resumed = await eventually('the log following again after a new snapshot', 60_000, async () => {
    const b = await getBackup(bed, 'src');
    return logCondition(b)?.status === 'True' && (b.status?.etcdRevision ?? 0) >= compactedTo ? b : undefined;
  });
  t.diagnostic(`gap ${gap.from}-${gap.to} reported; a snapshot at revision ${resumed.status?.etcdRevision} restarted the log`);
  // The revisions between the compaction and that snapshot are in neither: the gap, as reported, runs to it.
  const grown = await eventually('the gap reported up to the snapshot the log resumed from', 30_000, async () => {
    const g = (await getBackup(bed, 'src')).status?.changeLog?.gaps;
    return g?.length === 1 && g[0]?.to === (resumed.status?.etcdRevision ?? 0) - 1 ? g[0] : undefined;
  });
  assert.equal(grown.from, gap.from);
  const inGap = await restoreTo('in-gap', (gap.from ?? 0) + 1);
  assert.deepEqual([inGap.status?.phase, inGap.status?.reason], ['Failed', 'PointInTimeUnavailable']);
  assert.match(inGap.status?.conditions?.[0]?.message ?? '', /missing/);

  // The chunks a replay still needs removed once its point was chosen (retention, or by hand): the restore
  // fails saying so, instead of replaying for ever. (From the first mark: the replay gets there within seconds, where
  // replaying to a later one took over four minutes on a loaded machine.)
  const from = points[0]?.revision ?? 0;
  await createRestore(bed, 'tailless', { etcdCluster: { name: 'tailless' }, backupStorageType: 'S3', s3, pointInTime: { revision: last3 }, clusterSpec: { size: 1 } });
  const chosen = await eventually('the point chosen', 120_000, async () => ((await getRestore(bed, 'tailless'))?.status?.pointInTime));
  const needed = chunksOf(await storedKeys(minio, 'backups', changeLogPrefix('src.db')), 'src.db').filter((c) => c.to > from && c.from <= last3);
  assert.ok(needed.length > 0, 'chunks after the first mark');
  await minio.client.send(new DeleteObjectsCommand({ Bucket: 'backups', Delete: { Objects: needed.flatMap((c) => [{ Key: c.name }, { Key: `${c.name}.sha256` }]) } }));
  const cut = await eventually('the restore without its chunks ended', 240_000, () => restoreEnded(bed, 'tailless'));
  assert.deepEqual([cut.status?.phase, cut.status?.reason], ['Failed', 'ChangeLogIncomplete'], JSON.stringify(cut.status));
  assert.ok((cut.status?.pointInTime?.replayedThrough ?? 0) < last3, `the replay stopped short of ${last3}: ${JSON.stringify(cut.status?.pointInTime)}`);
  // The member that restored the snapshot kept its pod: no member was replaced under the replay (one replaced
  // there made the replay find the store's revisions wrongly: seen in CI as StoreCompacted at revision 2).
  const tailless = (e: LogEntry): boolean => e.key === `${bed.namespace}/tailless`;
  assert.ok(loggedAt(operator.logs, 'the restored store\'s revisions, as the source\'s are numbered in it', tailless).length > 0, 'the replay found the shift');
  const removal = (e: LogEntry): boolean => tailless(e) && e.action?.type === 'RemoveMember';
  assert.deepEqual([...loggedAt(operator.logs, 'acting', removal), ...loggedAt(operator.logs, 'taken after refusals', removal)], [], 'no member removed');
  t.diagnostic(`chunks after revision ${from} removed once ${JSON.stringify(chosen)} was chosen: ${cut.status?.conditions?.[0]?.message}`);
  operator.succeeded();
});

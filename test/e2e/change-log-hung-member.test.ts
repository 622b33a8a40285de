// Issue 19 under a member fault: the member a change log watches hangs (every process stopped: its
// connections stay open and it answers nothing). The cluster goes on with the other two, and so must the
// log: it gives the silent member up and follows another, instead of waiting on it for ever.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { etcdStatus } from '../support/etcd-gateway.js';
import { backupBed, changeLogThrough, createBackup, writingUntil } from '../support/backup-bed.js';
import { inject } from '../support/faults.js';

test('a change log whose member hangs follows another member and catches up, RPO back under 10 s', async (t) => {
  const { bed, minio, operator, members } = await backupBed(t, 'log-hang', 3);
  await createBackup(bed, 'live', {
    clusterName: 'src', storageType: 'S3', s3: { path: 'backups/src.db', awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true },
    backupPolicy: { backupIntervalInSecond: 3600 }, continuous: { chunkSeconds: 2 },
  });
  const urlOf = (pod: typeof members[number]): string => `http://${pod.status?.podIP ?? ''}:2379`;
  const [first] = members;
  assert.ok(first);
  const anyMember = urlOf(first);
  await writingUntil(anyMember, 'the change log following', 90_000, async () => changeLogThrough(bed, 'live', (await etcdStatus(anyMember)).revision));

  // The member the log watches, as it said when it started following.
  const lines = operator.logs.flatMap((l) => { try { return [JSON.parse(l) as { msg?: string; endpoint?: string }]; } catch { return []; } });
  const watched = lines.filter((l) => l.msg === 'change log following').at(-1)?.endpoint ?? '';
  const hung = members.find((p) => watched.includes(p.metadata?.name ?? '-') || watched.includes(p.status?.podIP ?? '-'));
  assert.ok(hung, `the watched member (${watched}) among ${members.map((p) => p.metadata?.name).join(', ')}`);
  const live = urlOf(members.find((p) => p !== hung) ?? hung);
  await inject(t, { kind: 'hang', namespace: bed.namespace, pod: hung.metadata?.name ?? '' });

  const hungAt = (await etcdStatus(live)).revision;
  const caughtUp = await writingUntil(live, `the change log past revision ${hungAt}, its member hung`, 90_000, () => changeLogThrough(bed, 'live', hungAt + 5));
  assert.ok((caughtUp.status?.changeLog?.rpoSeconds ?? Infinity) < 10, `RPO back under 10 s: ${JSON.stringify(caughtUp.status?.changeLog)}`);
  const gaveUp = operator.logs.some((l) => l.includes('sent nothing for') && l.includes('following another member'));
  assert.ok(gaveUp, 'the log said why it left the member');
  operator.succeeded();
});

// Issue 19 under a member fault: the member a change log watches hangs (every process stopped: its
// connections stay open and it answers nothing). The cluster goes on with the other two, and so must the
// log: it gives the silent member up and follows another, instead of waiting on it for ever.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { etcdStatus } from '../support/etcd-gateway.js';
import { changeLogThrough, followedBed, podUrl, writingUntil } from '../support/backup-bed.js';
import { inject } from '../support/faults.js';

test('a change log whose member hangs follows another member and catches up, RPO back under 10 s', async (t) => {
  const { bed, operator, watched: hung, others } = await followedBed(t, 'log-hang');
  const live = podUrl(others[0] ?? hung);
  await inject(t, { kind: 'hang', namespace: bed.namespace, pod: hung.metadata?.name ?? '' });

  const hungAt = (await etcdStatus(live)).revision;
  const caughtUp = await writingUntil(live, `the change log past revision ${hungAt}, its member hung`, 90_000, () => changeLogThrough(bed, 'live', hungAt + 5));
  assert.ok((caughtUp.status?.changeLog?.rpoSeconds ?? Infinity) < 10, `RPO back under 10 s: ${JSON.stringify(caughtUp.status?.changeLog)}`);
  const gaveUp = operator.logs.some((l) => l.includes('sent nothing for') && l.includes('following another member'));
  assert.ok(gaveUp, 'the log said why it left the member');
  operator.succeeded();
});

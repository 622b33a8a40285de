// Issue 31, finding 3: the member a change log watches is cut off from its peers but not from the operator. It
// goes on answering the watch and its progress requests from its own store while the majority writes on. The RPO
// the operator reports must never be a lie: at every moment, every write the majority acknowledged before
// (now - RPO) is in the stored log. The log must then leave that member and catch up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { etcdPut } from '../support/etcd-gateway.js';
import { eventually } from '../support/lab.js';
import { changeLogThrough, followedBed, podUrl } from '../support/backup-bed.js';
import { isolateFromPeers } from '../support/partition.js';

/** The backup's samples of the named gauges, from one scrape. */
async function gauges(metricsUrl: string, backup: string, names: string[]): Promise<(number | undefined)[]> {
  const text = await (await fetch(metricsUrl)).text();
  return names.map((name) => {
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`backup="${backup}"`));
    return line === undefined ? undefined : Number(line.split(' ').pop());
  });
}

test('a change log whose member is cut off from its peers never reports an RPO it cannot back, and catches up from another member', async (t) => {
  const { bed, operator, watched: cut, others } = await followedBed(t, 'log-cut');
  const live = others.map(podUrl);

  // Writes to the majority, each with when it was acknowledged.
  const acked: { atMs: number; revision: number }[] = [];
  const writing = { on: true };
  const writer = (async () => {
    for (let i = 0; writing.on; i++) {
      const revision = await etcdPut(live[i % live.length] ?? '', `cut-${i}`, `${Date.now()}`, { timeoutMs: 2000 }).catch(() => 0);
      if (revision > 0) acked.push({ atMs: Date.now(), revision });
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  t.after(async () => { writing.on = false; await writer; });
  await new Promise((r) => setTimeout(r, 4000));
  const heal = isolateFromPeers(cut.status?.podIP ?? '');
  t.after(heal);
  const cutAt = Date.now();

  // For 40 s, twice a second: what the RPO claims against what is stored.
  const metricsUrl = await operator.metricsUrl();
  const lies: string[] = [];
  let highest = 0;
  for (let i = 0; i < 80; i++) {
    const [rpo, through] = await gauges(metricsUrl, 'live', ['etcd_operator_changelog_rpo_seconds', 'etcd_operator_changelog_revision']);
    const now = Date.now();
    if (rpo !== undefined && through !== undefined) {
      highest = Math.max(highest, rpo);
      // Acknowledged before the moment the RPO vouches for (with 200 ms for the scrape), yet not stored.
      const missing = acked.filter((w) => w.atMs < now - rpo * 1000 - 200 && w.revision > through);
      if (missing.length > 0) lies.push(`${((now - cutAt) / 1000).toFixed(1)} s after the cut: RPO ${rpo.toFixed(1)} s, stored through ${through}, yet ${missing.length} older writes missing (first ${missing[0]?.revision})`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  assert.deepEqual(lies.slice(0, 5), [], 'the RPO never claims writes the log has not stored');
  const last = acked.at(-1)?.revision ?? 0;
  const caughtUp = await eventually(`the log past ${last} from another member`, 30_000, () => changeLogThrough(bed, 'live', last));
  t.diagnostic(`${acked.length} writes; highest RPO while cut ${highest.toFixed(1)} s; status ${JSON.stringify(caughtUp.status?.changeLog)}`);
  heal();
  operator.succeeded();
});

/** What the chaos scenarios share: their length and seeds, seeded choices, and a monitor of etcd's member list. */
import type { TestContext } from 'node:test';
import { EtcdClient, memberName } from '../../src/etcd/client.js';
import { clientUrl } from '../../src/etcd/identity.js';
import { lab } from './lab.js';
import { labLookup } from './lab-dns.js';
import type { Testbed } from './cluster-testbed.js';

/**
 * `npm test` runs each scenario once, short (seed 1, ~30 s of faults); `npm run test:chaos` (CHAOS=full) runs
 * every seed for minutes. CHAOS_SEEDS and CHAOS_SECONDS override either.
 */
export function chaosSettings(): { seeds: number[]; durationMs: number; full: boolean } {
  const full = process.env.CHAOS === 'full';
  const seeds = (process.env.CHAOS_SEEDS ?? (full ? '1,2,3' : '1')).split(',').map(Number);
  return { seeds, durationMs: Number(process.env.CHAOS_SECONDS ?? (full ? 180 : 30)) * 1000, full };
}

/** mulberry32: the same seed gives the same faults, so a failing run can be replayed. */
export function seededRandom(seed: number): { next(): number; int(min: number, max: number): number; pick<T>(items: readonly T[]): T } {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return { next, int, pick: <T>(items: readonly T[]): T => items[int(0, items.length - 1)] as T };
}

export interface MembershipReport {
  samples: number;
  /** The most members etcd listed at once, and the fewest. */
  most: number;
  fewest: number;
  /** The most learners, and the most members not started yet, at once. */
  mostLearners: number;
  mostUnstarted: number;
}

/**
 * Reads the cluster's etcd member list every 250 ms through any member that answers, until stopped: a record of
 * how far membership ever strayed, to check that changes went one at a time.
 */
export function watchMembership(t: TestContext, bed: Testbed, cluster: string): { stop(): MembershipReport } {
  const etcd = new EtcdClient({ lookup: labLookup(), timeoutMs: 1000 });
  const address = { cluster, namespace: bed.namespace, domain: lab().clusterDomain, tls: false };
  const report: MembershipReport = { samples: 0, most: 0, fewest: Number.MAX_SAFE_INTEGER, mostLearners: 0, mostUnstarted: 0 };
  const control = { running: true };
  const loop = (async () => {
    while (control.running) {
      const pods = (await bed.pods(cluster).catch(() => [])).map((p) => p.metadata?.name ?? '');
      for (const pod of pods) {
        const members = await etcd.memberList(clientUrl(address, pod)).catch(() => undefined);
        if (!members) continue;
        report.samples += 1;
        report.most = Math.max(report.most, members.length);
        report.fewest = Math.min(report.fewest, members.length);
        report.mostLearners = Math.max(report.mostLearners, members.filter((m) => m.isLearner).length);
        report.mostUnstarted = Math.max(report.mostUnstarted, members.filter((m) => !m.name).length);
        break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  t.after(async () => { control.running = false; await loop; });
  return { stop: () => { control.running = false; return report; } };
}

/** etcd's member names, as any answering member lists them. */
/** member name → member ID, as the cluster's status reports them. */
export const memberIds = async (bed: Testbed, cluster: string): Promise<Map<string, string>> =>
  new Map(((await bed.get(cluster)).status?.memberStatus ?? []).map((m) => [m.name, m.id ?? '']));

export async function memberNames(bed: Testbed, cluster: string): Promise<string[]> {
  const etcd = new EtcdClient({ lookup: labLookup(), timeoutMs: 2000 });
  const address = { cluster, namespace: bed.namespace, domain: lab().clusterDomain, tls: false };
  for (const pod of await bed.pods(cluster)) {
    const members = await etcd.memberList(clientUrl(address, pod.metadata?.name ?? '')).catch(() => undefined);
    if (members) return members.map(memberName).sort();
  }
  throw new Error(`no member of ${cluster} answered`);
}

/**
 * Every member's HashKV at one revision (the lowest any member has applied), once all members report: equal
 * hashes mean the replicas hold the same data, which a write verifier reading through one member cannot tell.
 */
export async function memberHashes(bed: Testbed, cluster: string): Promise<{ revision: number; hashes: Map<string, number> }> {
  const etcd = new EtcdClient({ lookup: labLookup(), timeoutMs: 5000 });
  const address = { cluster, namespace: bed.namespace, domain: lab().clusterDomain, tls: false };
  const names = await memberNames(bed, cluster);
  const revision = Math.min(...(await memberRevisions(bed, cluster, names)).values());
  const hashes = await Promise.all(names.map(async (n) => [n, (await etcd.hashKV(clientUrl(address, n), revision)).hash] as const));
  return { revision, hashes: new Map(hashes) };
}

/** The store revision each member (every listed member, or `names`) has applied. */
export async function memberRevisions(bed: Testbed, cluster: string, names?: string[]): Promise<Map<string, number>> {
  const etcd = new EtcdClient({ lookup: labLookup(), timeoutMs: 5000 });
  const address = { cluster, namespace: bed.namespace, domain: lab().clusterDomain, tls: false };
  const members = names ?? await memberNames(bed, cluster);
  return new Map(await Promise.all(members.map(async (n) => [n, (await etcd.status(clientUrl(address, n))).revision] as const)));
}

import { etcdGetPrefix, etcdPut } from './etcd-gateway.js';
import { eventually } from './lab.js';
import { checkRecording } from './history-check.js';
import type { HistorySummary } from './history-check.js';
import { startRecordedWorkload } from './recorded-workload.js';
import type { Testbed } from './cluster-testbed.js';
import type { ClusterSpec } from '../../src/api/etcd-cluster.js';

export interface LoadReport {
  attempted: number;
  acknowledged: number;
  /** Acknowledged writes missing or changed at the end: must be 0. */
  lost: string[];
  /** Keys under the prefix holding a value that was never written. */
  unexpected: string[];
  /** An acknowledged write whose revision was not above the one before. */
  revisionWentBack: boolean;
  /** The longest time without an acknowledged write, while the load ran. */
  longestGapMs: number;
  /** The recorded clients' history beside the writer, checked (options.checkedAs). */
  history?: HistorySummary;
}

/**
 * How many acknowledged writes make a load that "kept writing" (checkLoad). finish() writes on (bounded) until the
 * load has them, so a quick heal on a busy machine (CI's 81-minute run saw 99 in a scale-up under the operator's
 * kill) still proves writes were acknowledged after it, rather than failing on the machine's pace.
 */
export const ENOUGH_WRITES = 100;
const ENOUGH_WRITES_WITHIN_MS = 60_000;

export interface WriteLoadOptions {
  maxWrites?: number;
  /**
   * The pause after each acknowledged write (default 25 ms, some 30 writes a second). Unpaced, one writer kept a
   * 3-member cluster and its test near the machine's two cores (84% busy, 80 writes a second), slowing every test
   * beside it; a fault's window still sees dozens of writes at this pace.
   */
  pauseMs?: number;
  /**
   * Beside the writer, concurrent clients and watchers recorded for the linearizability checker (issue 34),
   * their history and its timeline kept under this name; finish() reports what the check found, checkLoad fails on an anomaly.
   */
  checkedAs?: string;
}

export interface WriteLoad {
  /** Stops writing and checks every acknowledged write against what etcd holds. */
  finish(): Promise<LoadReport>;
  /** Stops writing, checking nothing: a test that failed before finish() must not leave it writing. */
  stop(): Promise<void>;
}

/**
 * Writes `<prefix><n>` = `v<n>` one after another, paced, through `endpoint` (a client Service) until finished,
 * recording which writes etcd acknowledged; a failed write is retried under the next number after a short
 * pause. Writes whose answer was lost may or may not have landed, so they are allowed but not required.
 */
export function startWriteLoad(endpoint: string, prefix: string, options: WriteLoadOptions = {}): WriteLoad {
  const { maxWrites = 100_000, checkedAs, pauseMs = 25 } = options;
  const recorded = checkedAs === undefined ? undefined : startRecordedWorkload(endpoint);
  const acknowledged = new Set<number>();
  let attempted = 0;
  const control = { running: true, done: false };
  let lastRevision = 0;
  let revisionWentBack = false;
  let lastAck = Date.now();
  let longestGapMs = 0;
  const loop = (async () => {
    while (control.running && attempted < maxWrites) {
      const n = attempted++;
      try {
        const revision = await etcdPut(endpoint, `${prefix}${n}`, `v${n}`, { timeoutMs: 2000, fresh: true });
        const now = Date.now();
        longestGapMs = Math.max(longestGapMs, now - lastAck);
        lastAck = now;
        if (revision <= lastRevision) revisionWentBack = true;
        lastRevision = revision;
        acknowledged.add(n);
        await new Promise((r) => setTimeout(r, pauseMs));
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    control.done = true;
  })();
  const stop = async (): Promise<void> => {
    control.running = false;
    await Promise.all([loop, recorded?.stop()]);
  };
  return {
    stop,
    async finish() {
      await eventually(`${ENOUGH_WRITES} writes acknowledged`, ENOUGH_WRITES_WITHIN_MS, () => Promise.resolve(control.done || acknowledged.size >= ENOUGH_WRITES ? true : undefined)).catch(() => undefined);
      control.running = false;
      const [, recording] = await Promise.all([loop, recorded?.stop()]);
      longestGapMs = Math.max(longestGapMs, Date.now() - lastAck);
      let held = new Map<string, string>();
      for (let attempt = 0; attempt < 20; attempt++) {
        try {
          held = await etcdGetPrefix(endpoint, prefix, { timeoutMs: 5000, fresh: true });
          break;
        } catch {
          await new Promise((r) => setTimeout(r, 500));
        }
      }
      const lost = [...acknowledged].map((n) => `${prefix}${n}`).filter((k) => held.get(k) !== `v${k.slice(prefix.length)}`);
      const unexpected = [...held].filter(([k, v]) => {
        const n = Number(k.slice(prefix.length));
        return !(Number.isInteger(n) && n < attempted && v === `v${n}`);
      }).map(([k]) => k);
      const history = recording && checkedAs !== undefined ? await checkRecording(recording, checkedAs) : undefined;
      return { attempted, acknowledged: acknowledged.size, lost, unexpected, revisionWentBack, longestGapMs, ...(history ? { history } : {}) };
    },
  };
}

/** Waits (bounded) until a write through `endpoint` is acknowledged: the Service routes to a serving member. */
export async function untilServing(endpoint: string): Promise<void> {
  await eventually('the client Service answers', 30_000, async () => ((await startWriteLoad(endpoint, 'warmup-', { maxWrites: 1 }).finish()).acknowledged === 1 ? true : undefined));
}

/**
 * A write load on `endpoint` with recorded clients beside it, checked as `${bed.namespace}-${name}` when it
 * finishes (checkLoad), and stopped when the test ends: a test that fails before finishing it would otherwise
 * keep writing (up to 100,000 tries against a cluster deleted with its namespace), holding its file open until
 * the file's own time limit.
 */
export function checkedLoad(bed: Testbed, endpoint: string, name: string, prefix = 'load-'): WriteLoad {
  const load = startWriteLoad(endpoint, prefix, { checkedAs: `${bed.namespace}-${name}` });
  bed.after(() => load.stop());
  return load;
}

export interface LoadedCluster {
  /** The member names once settled, sorted. */
  members: string[];
  endpoint: string;
  load: WriteLoad;
  /** The leader status reported once the load ran. */
  leader: string;
}

/**
 * The cluster created at `spec`, settled at its size within `settleMs`, serving through its client Service,
 * a write load on it (keys `load-<n>`), and its leader: where every fault test under load starts. With
 * `recorded`, concurrent clients and watchers beside it, their history checked when the load finishes (issue 34:
 * on in the tests seen passing with it so far).
 */
export async function loadedCluster(bed: Testbed, name: string, spec: ClusterSpec & { size: number }, settleMs: number, options: { recorded?: boolean } = {}): Promise<LoadedCluster> {
  await bed.create(name, spec);
  const members = await eventually(`${spec.size} members settled`, settleMs, () => bed.settledMembers(name, spec.size));
  const endpoint = await bed.clientEndpoint(name);
  await untilServing(endpoint);
  const load = options.recorded ? checkedLoad(bed, endpoint, name) : startWriteLoad(endpoint, 'load-');
  // Stopped with the test, as checkedLoad's is.
  if (!options.recorded) bed.after(() => load.stop());
  const leader = await eventually('a leader reported', 30_000, async () => (await bed.get(name)).status?.leader);
  return { members, endpoint, load, leader };
}

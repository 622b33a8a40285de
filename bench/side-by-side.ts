/**
 * The same scenarios on our operator and on the official etcd-io one, in one run (issue 36). Every time is read
 * through etcd itself, never from either operator's status (etcd-io's is not reliable): "serving" is the cluster's
 * member pods, exactly `size` of them alive, each answering, etcd listing exactly `size` voters, and a put then a
 * get through one of them. A run past its bound is recorded as never finished, and the scenario is not tried again
 * on that operator (etcd-io never recovers a deleted member pod: each try would cost the whole bound).
 */
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { etcdGet, etcdPut, etcdStatus, post } from '../test/support/etcd-gateway.js';
import { eventually, labCommand } from '../test/support/lab.js';
import { cpuSeconds, rssMiB } from '../test/support/process-usage.js';
import { inNamespace } from './bench-cluster.js';
import type { Contender } from './contenders.js';
import type { Measured, SideBySideRow } from './plot.js';
import { summarise } from './stats.js';

const progress = (fields: Record<string, unknown>): void => { process.stderr.write(`${JSON.stringify({ scenario: 'side-by-side', ...fields })}\n`); };

const alive = (p: V1Pod): boolean => !p.metadata?.deletionTimestamp && (p.status?.podIP ?? '') !== '';
const livePods = async (core: CoreV1Api, namespace: string, selector: string): Promise<V1Pod[]> =>
  (await core.listNamespacedPod({ namespace, labelSelector: selector })).items.filter(alive);
const clientUrl = (p: V1Pod): string => `http://${p.status?.podIP ?? ''}:2379`;

interface ListedMember { ID?: string; name?: string; isLearner?: boolean }

/** Whether the cluster serves at `size`: see the file's comment. False, not an error, while it does not. */
export async function serving(core: CoreV1Api, namespace: string, selector: string, size: number): Promise<boolean> {
  try {
    const pods = await livePods(core, namespace, selector);
    const [first] = pods;
    if (pods.length !== size || !first) return false;
    const listed = ((await post(clientUrl(first), '/v3/cluster/member/list', {}, { timeoutMs: 2000 })) as { members?: ListedMember[] }).members ?? [];
    if (listed.length !== size || listed.some((m) => m.isLearner || !m.name)) return false;
    const ids = new Set(listed.map((m) => BigInt(m.ID ?? '0').toString()));
    for (const p of pods) {
      if (!ids.has(BigInt((await etcdStatus(clientUrl(p), { timeoutMs: 2000 })).memberId).toString())) return false;
    }
    const key = `side-by-side-${Date.now()}`;
    await etcdPut(clientUrl(first), key, 'x', { timeoutMs: 2000 });
    return (await etcdGet(clientUrl(first), key, { timeoutMs: 2000 })) === 'x';
  } catch {
    return false;
  }
}

/** Milliseconds until `done` holds, polled, or undefined past `boundMs`. */
async function until(done: () => Promise<boolean>, boundMs: number): Promise<number | undefined> {
  const started = performance.now();
  while (performance.now() - started < boundMs) {
    if (await done()) return performance.now() - started;
    await new Promise((r) => setTimeout(r, 200));
  }
  return undefined;
}

/** Waits until the cluster serves at `size`; one that never does within `boundMs` ends the scenario. */
async function servingWithin(core: CoreV1Api, c: Contender, namespace: string, name: string, size: number, boundMs: number): Promise<void> {
  if (await until(() => serving(core, namespace, c.selector(name), size), boundMs) === undefined) throw new Error(`${c.name}: ${name} never served at ${size}`);
}

/** The median, least and most of the runs that finished. */
const finished = (samples: number[]): Measured => {
  const s = summarise(samples);
  return { finished: true, median: s.medianMs, min: s.minMs, max: s.maxMs, runs: s.runs };
};

/** A scenario's runs on one operator: each run's time, until one never finishes. */
async function runs(what: string, who: Contender['name'], count: number, boundMs: number, once: () => Promise<number | undefined>): Promise<Measured> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const ms = await once();
    progress({ what, who, run: i + 1, ms: ms === undefined ? `never within ${boundMs}` : Math.round(ms) });
    if (ms === undefined) return { finished: false, bound: boundMs, runs: i + 1 };
    samples.push(ms);
  }
  return finished(samples);
}

export interface Bounds { createMs: number; scaleMs: number; recoverMs: number; nodeRecoverMs: number }
export const BOUNDS: Bounds = { createMs: 180_000, scaleMs: 180_000, recoverMs: 180_000, nodeRecoverMs: 300_000 };

/** One operator's results, by scenario. */
export type Results = Map<string, { unit: SideBySideRow['unit']; measured: Measured }>;

/** Every scenario on one operator (started before, stopped after by the caller). */
export async function scenarios(core: CoreV1Api, c: Contender, count: number, bounds: Bounds = BOUNDS): Promise<Results> {
  const results: Results = new Map();
  const timeRow = async (name: string, bound: number, once: () => Promise<number | undefined>): Promise<void> => {
    results.set(name, { unit: 'ms', measured: await runs(name, c.name, count, bound, once) });
  };
  const isServing = (namespace: string, name: string, size: number) => () => serving(core, namespace, c.selector(name), size);
  for (const size of [3, 5]) {
    await timeRow(`create ${size} members → serving a put/get`, bounds.createMs, () => inNamespace(core, async (namespace) => {
      const started = performance.now();
      await c.create(namespace, 'b', size);
      const ms = await until(isServing(namespace, 'b', size), bounds.createMs);
      return ms === undefined ? undefined : performance.now() - started;
    }));
  }
  await inNamespace(core, async (namespace) => {
    await c.create(namespace, 's', 3);
    await servingWithin(core, c, namespace, 's', 3, bounds.createMs);
    const resize = (size: number) => async (): Promise<number | undefined> => {
      await c.scale(namespace, 's', size);
      return until(isServing(namespace, 's', size), bounds.scaleMs);
    };
    // Alternating: each 3 → 5 starts from the 3 the last 5 → 3 left.
    const up: number[] = []; const down: number[] = [];
    let upMeasured: Measured | undefined; let downMeasured: Measured | undefined;
    for (let i = 0; i < count && !downMeasured; i++) {
      const u = await resize(5)();
      if (u === undefined) { upMeasured = { finished: false, bound: bounds.scaleMs, runs: i + 1 }; break; }
      up.push(u);
      const d = await resize(3)();
      if (d === undefined) downMeasured = { finished: false, bound: bounds.scaleMs, runs: i + 1 };
      else down.push(d);
      progress({ what: 'scale', who: c.name, run: i + 1, upMs: Math.round(u), downMs: d === undefined ? 'never' : Math.round(d) });
    }
    results.set('scale 3 → 5 → serving at 5', { unit: 'ms', measured: upMeasured ?? finished(up) });
    const downResult = downMeasured ?? (down.length > 0 ? finished(down) : undefined);
    if (downResult) results.set('scale 5 → 3 → serving at 3', { unit: 'ms', measured: downResult });
  });
  await inNamespace(core, async (namespace) => {
    await c.create(namespace, 'p', 3);
    await servingWithin(core, c, namespace, 'p', 3, bounds.createMs);
    await timeRow('a member pod deleted → serving at full size again', bounds.recoverMs, async () => {
      const [victim] = await followers(core, namespace, c.selector('p'));
      if (!victim) throw new Error(`${c.name}: no follower answers`);
      const started = performance.now();
      await core.deleteNamespacedPod({ namespace, name: victim.metadata?.name ?? '', gracePeriodSeconds: 0 });
      const gone = async (): Promise<boolean> => !(await core.listNamespacedPod({ namespace, labelSelector: c.selector('p') })).items.some((p) => p.metadata?.uid === victim.metadata?.uid);
      const ms = await until(async () => (await gone()) && serving(core, namespace, c.selector('p'), 3), bounds.recoverMs);
      return ms === undefined ? undefined : performance.now() - started;
    });
  });
  return results;
}

/** The member pods that answer as followers (losing one costs no election, as a real follower failure). */
async function followers(core: CoreV1Api, namespace: string, selector: string): Promise<V1Pod[]> {
  const found: V1Pod[] = [];
  for (const p of await livePods(core, namespace, selector)) {
    const s = await etcdStatus(clientUrl(p), { timeoutMs: 2000 }).catch(() => undefined);
    if (s && s.memberId !== s.leaderId) found.push(p);
  }
  return found;
}

/**
 * A follower's node killed (the lab's fault: its kubelet and containers frozen): the time until the cluster serves
 * at full size with no member on that node, then the node healed and its leftovers gone before the next run. A node
 * hosting the contender's own pod is never chosen: that would measure its failover, not the cluster's.
 */
export async function nodeKill(core: CoreV1Api, c: Contender, count: number, boundMs = BOUNDS.nodeRecoverMs): Promise<Measured> {
  return inNamespace(core, async (namespace) => {
    await c.create(namespace, 'n', 3);
    await servingWithin(core, c, namespace, 'n', 3, BOUNDS.createMs);
    return runs('a node killed → serving at full size, none on it', c.name, count, boundMs, async () => {
      // One member per node first (ours spreads them again once a killed node is back; a node with two would take
      // the quorum with it, which is another scenario).
      await until(async () => {
        const pods = await livePods(core, namespace, c.selector('n'));
        return pods.length === 3 && new Set(pods.map((p) => p.spec?.nodeName)).size === 3;
      }, 180_000);
      const nodes = (await livePods(core, namespace, c.selector('n'))).map((p) => p.spec?.nodeName);
      const own = await c.node();
      const victim = (await followers(core, namespace, c.selector('n'))).find((p) => p.spec?.nodeName !== own && nodes.filter((n) => n === p.spec?.nodeName).length === 1);
      const node = victim?.spec?.nodeName ?? '';
      if (!victim || !node) throw new Error(`${c.name}: no follower alone on a node the operator does not run on`);
      progress({ what: 'node kill', who: c.name, node, members: (await livePods(core, namespace, c.selector('n'))).map((p) => `${p.metadata?.name ?? ''}@${p.spec?.nodeName ?? ''}`) });
      const started = performance.now();
      await labCommand(['fault', 'node-kill', node]);
      try {
        const ms = await until(async () => !(await livePods(core, namespace, c.selector('n'))).some((p) => p.spec?.nodeName === node)
          && serving(core, namespace, c.selector('n'), 3), boundMs);
        return ms === undefined ? undefined : performance.now() - started;
      } finally {
        await labCommand(['heal', 'node-kill', node]);
        await eventually(`${node} Ready again`, 180_000, async () => ((await core.readNode({ name: node })).status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') ? true : undefined));
      }
    });
  });
}

/**
 * Memory idle with 1 and with 20 clusters (one member each beyond the first three-member one: the point is what
 * each cluster costs the operator, and 60 more etcd pods would not fit this machine beside both operators), and
 * the CPU it takes over an idle minute with all 20.
 */
export async function idleCost(core: CoreV1Api, c: Contender, idleMs = 60_000): Promise<Results> {
  return inNamespace(core, async (namespace) => {
    await c.create(namespace, 'idle-0', 3);
    await servingWithin(core, c, namespace, 'idle-0', 3, BOUNDS.createMs);
    await new Promise((r) => setTimeout(r, idleMs));
    const rssOneMiB = rssMiB(await c.pid());
    for (let i = 1; i < 20; i++) await c.create(namespace, `idle-${i}`, 1);
    for (let i = 1; i < 20; i++) await servingWithin(core, c, namespace, `idle-${i}`, 1, 600_000);
    await new Promise((r) => setTimeout(r, idleMs));
    const cpuBefore = cpuSeconds(await c.pid());
    await new Promise((r) => setTimeout(r, idleMs));
    const pid = await c.pid();
    const [rssTwentyMiB, cpuIdle] = [rssMiB(pid), cpuSeconds(pid) - cpuBefore];
    const point = (value: number): Measured => ({ finished: true, median: value, min: value, max: value, runs: 1 });
    progress({ what: 'idle', who: c.name, rssOneMiB, rssTwentyMiB, cpuSeconds: cpuIdle });
    return new Map([
      ['memory idle, 1 cluster (RSS)', { unit: 'MiB', measured: point(rssOneMiB) }],
      ['memory idle, 20 clusters (RSS)', { unit: 'MiB', measured: point(rssTwentyMiB) }],
      ['CPU idle, 20 clusters', { unit: 'cpu', measured: point(Math.round((cpuIdle / (idleMs / 1000)) * 1000) / 1000) }],
    ] as const);
  });
}

/** Both operators through every scenario, one active at a time: ours first, then etcd-io's. */
export async function sideBySide(core: CoreV1Api, contenders: (() => Promise<Contender>)[], count: number): Promise<SideBySideRow[]> {
  const all: Results[] = [];
  for (const make of contenders) {
    const c = await make();
    await c.start();
    try {
      const results = await scenarios(core, c, count);
      results.set('a node killed → serving at full size, none on it', { unit: 'ms', measured: await nodeKill(core, c, Math.min(count, 2)) });
      // Memory from a fresh start: what the scenarios above left in the heap is not what an idle operator needs.
      await c.stop();
      await c.start();
      for (const [k, v] of await idleCost(core, c)) results.set(k, v);
      all.push(results);
    } finally {
      await c.stop();
    }
  }
  const [ourResults, theirResults] = all;
  if (!ourResults || !theirResults) throw new Error('the side-by-side bench needs both operators');
  // A scenario one side could not run (its scale-down after a scale-up that never finished) has no row.
  return [...ourResults].flatMap(([scenario, { unit, measured }]) => {
    const theirs = theirResults.get(scenario);
    return theirs ? [{ scenario, unit, ours: measured, theirs: theirs.measured }] : [];
  });
}

/** ours / theirs of the medians, when both finished. */
export const ratioOf = (r: SideBySideRow): number | undefined =>
  r.ours.finished && r.theirs.finished && r.theirs.median > 0 ? Math.round((r.ours.median / r.theirs.median) * 100) / 100 : undefined;

const shown = (m: Measured, unit: SideBySideRow['unit']): string => {
  if (!m.finished) return `never (bound ${unit === 'ms' ? `${m.bound / 1000} s` : m.bound}, ${m.runs} run${m.runs === 1 ? '' : 's'})`;
  const value = unit === 'ms' ? `${(m.median / 1000).toFixed(1)} s` : unit === 'MiB' ? `${m.median} MiB` : `${m.median} cores`;
  return m.runs > 1 ? `${value} (${m.runs} runs, ${unit === 'ms' ? `${(m.min / 1000).toFixed(1)}–${(m.max / 1000).toFixed(1)} s` : `${m.min}–${m.max}`})` : value;
};

/** The side-by-side table in Markdown: medians of each, and the ratio ours/theirs. */
export function sideBySideTable(rows: SideBySideRow[]): string {
  return ['| scenario | ours | etcd-io | ours / etcd-io |', '|---|---|---|---|', ...rows.map((r) => {
    const ratio = ratioOf(r);
    const never = [r.ours.finished ? '' : 'ours', r.theirs.finished ? '' : 'theirs'].filter((x) => x !== '');
    const cell = ratio !== undefined ? String(ratio) : `${never.join(' and ')} never finished`;
    return `| ${r.scenario} | ${shown(r.ours, r.unit)} | ${shown(r.theirs, r.unit)} | ${cell} |`;
  })].join('\n');
}

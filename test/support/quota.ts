import assert from 'node:assert/strict';
import type { Testbed } from './cluster-testbed.js';
import { eventually } from './lab.js';
import { etcdPut } from './etcd-gateway.js';

/** Puts `bytes`-long values under `key(i)`, at most `attempts`, until etcd refuses one past its quota (NOSPACE); answers how many it took. */
export async function fillQuota(endpoint: string, key: (i: number) => string, bytes: number, attempts = 2000): Promise<number> {
  const value = 'z'.repeat(bytes);
  let refusal = '';
  let i = 0;
  for (; i < attempts && !refusal; i++) await etcdPut(endpoint, key(i), value).catch((err: unknown) => { refusal = (err as Error).message; });
  assert.match(refusal, /database space exceeded/, 'etcd refused writes past the quota');
  return i;
}

/**
 * Live data (distinct keys under `prefix`) written until NOSPACE holds for good: the operator found the database
 * still within 5 % of the quota after compacting and defragmenting, and left it to a person (Degraded QuotaFull).
 * A refusal may come while bbolt's file holds free pages that defragmenting returns; the operator then disarms
 * (a minute after its last recovery at the earliest), and more is written.
 */
export async function fillUntilQuotaFull(bed: Testbed, cluster: string, endpoint: string, prefix: string, timeoutMs: number): Promise<void> {
  let written = 0;
  await eventually(`NOSPACE held by live data (QuotaFull) in ${cluster}`, timeoutMs, async () => {
    if ((await bed.get(cluster)).status?.conditions?.some((c) => c.type === 'Degraded' && c.status === 'True' && c.reason === 'QuotaFull')) return true;
    if (await etcdPut(endpoint, `${prefix}probe`, 'x').then(() => true, () => false)) {
      written += await fillQuota(endpoint, (i) => `${prefix}${String(written + i).padStart(5, '0')}`, 4 * 1024);
    }
    return undefined;
  }, () => `${written} keys written`);
}

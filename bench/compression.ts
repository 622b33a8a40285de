/**
 * The backup codecs on real etcd data: a snapshot of the lab's own Kubernetes API server etcd (every object of a
 * cluster that has run the test suites: pods, events, leases, CRDs), held in memory and sealed with each codec,
 * with and without a key; the ratio, and the speed of sealing and of opening again, each the median of `runs`.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { EtcdClient } from '../src/etcd/client.js';
import { CODECS, seal, unseal } from '../src/storage/sealed.js';
import type { Codec, SealOptions } from '../src/storage/sealed.js';
import { lab } from '../test/support/lab.js';
import { summarise } from './stats.js';

export interface CodecRow { codec: Codec; encrypted: boolean; ratio: number; sealMiBs: number; openMiBs: number }
export interface CodecBench { snapshotBytes: number; rows: CodecRow[] }

async function timed(work: () => Promise<number>, runs: number): Promise<{ ms: number; bytes: number }> {
  const samples: number[] = [];
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    bytes = await work();
    samples.push(performance.now() - started);
  }
  return { ms: summarise(samples).medianMs, bytes };
}

async function collect(source: AsyncIterable<Uint8Array>): Promise<Buffer[]> {
  const parts: Buffer[] = [];
  for await (const chunk of source) parts.push(Buffer.from(chunk));
  return parts;
}

async function count(source: AsyncIterable<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const chunk of source) n += chunk.length;
  return n;
}

// As a gRPC stream delivers a snapshot: 64 KiB at a time.
const streamed = (data: Buffer): AsyncIterable<Buffer> =>
  Readable.from(Array.from({ length: Math.ceil(data.length / 65_536) }, (_, i) => data.subarray(i * 65_536, (i + 1) * 65_536)));

export async function codecBench(runs: number): Promise<CodecBench> {
  const etcd = new EtcdClient({ timeoutMs: 60_000 });
  const snapshot = Buffer.concat(await collect(etcd.snapshot(lab().apiserverEtcd, 120_000)));
  const mib = snapshot.length / 2 ** 20;
  const key = { id: 'bench', key: randomBytes(32) };
  const ring = new Map([[key.id, key.key]]);
  const rows: CodecRow[] = [];
  for (const codec of CODECS) {
    for (const options of [{ codec }, { codec, key }] as SealOptions[]) {
      if (codec === 'None' && !options.key) continue; // the plain snapshot: nothing to measure
      let sealed: Buffer[] = [];
      const sealing = await timed(async () => { sealed = await collect(seal(streamed(snapshot), options)); return sealed.reduce((n, b) => n + b.length, 0); }, runs);
      const opening = await timed(() => count(unseal(Readable.from(sealed), ring, 'bench')), runs);
      if (opening.bytes !== snapshot.length) throw new Error(`${codec}: opened ${opening.bytes} bytes of ${snapshot.length}`);
      rows.push({
        codec, encrypted: options.key !== undefined, ratio: Number((snapshot.length / sealing.bytes).toFixed(2)),
        sealMiBs: Math.round(mib / (sealing.ms / 1000)), openMiBs: Math.round(mib / (opening.ms / 1000)),
      });
    }
  }
  return { snapshotBytes: snapshot.length, rows };
}

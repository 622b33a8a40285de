import { createHash } from 'node:crypto';
import { keyAfter } from './client.js';
import type { EtcdClient } from './client.js';

const PAGE = 1000;

/** How many keys a store held at a revision, and a sha256 over every key, value, version and revision, in key order. */
export interface ContentDigest { keys: number; sha256: string }

/**
 * The store's content at `revision`, read a page at a time (memory stays at one page): two stores that held
 * the same data at that revision have the same digest, whatever their compaction or physical layout, which
 * HashKV does not allow for.
 */
export async function contentDigest(etcd: EtcdClient, endpoint: string, revision: number): Promise<ContentDigest> {
  const hash = createHash('sha256');
  let keys = 0;
  let from: Buffer = Buffer.from([0]);
  for (;;) {
    const page = await etcd.rangePage(endpoint, from, revision, PAGE);
    for (const kv of page.kvs) {
      const numbers = Buffer.alloc(24);
      numbers.writeBigUInt64BE(BigInt(kv.createRevision), 0);
      numbers.writeBigUInt64BE(BigInt(kv.modRevision), 8);
      numbers.writeBigUInt64BE(BigInt(kv.version), 16);
      const lengths = Buffer.alloc(8);
      lengths.writeUInt32BE(kv.key.length, 0);
      lengths.writeUInt32BE(kv.value.length, 4);
      hash.update(lengths).update(kv.key).update(kv.value).update(numbers);
      keys++;
    }
    const last = page.kvs[page.kvs.length - 1];
    if (!page.more || !last) return { keys, sha256: hash.digest('hex') };
    // The next page starts just after the last key: the key with a zero byte appended.
    from = keyAfter(last.key);
  }
}

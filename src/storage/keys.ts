import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SealError, sealingKey } from './sealed.js';
import type { Codec, KeyRing, SealOptions } from './sealed.js';

/** A ring of checked keys (each 32 bytes under a plain id). */
export function keyRing(entries: Iterable<readonly [string, Buffer]>): KeyRing {
  return new Map([...entries].map(([id, key]) => [id, sealingKey(id, key).key]));
}

/**
 * The keys of a Secret mounted as a directory: one file per key, named by its id. The kubelet's own entries
 * ("..data" and the timestamped directory it points to) start with dots and are not keys.
 */
export async function keyRingFromDir(dir: string): Promise<KeyRing> {
  const ids = (await readdir(dir)).filter((name) => !name.startsWith('.'));
  return keyRing(await Promise.all(ids.map(async (id) => [id, await readFile(join(dir, id))] as const)));
}

/** How new backups are sealed: the codec, and the key of the ring that `keyId` names. */
export function sealWith(codec: Codec, ring: KeyRing | undefined, keyId: string | undefined): SealOptions {
  if (!ring || keyId === undefined) return { codec };
  const key = ring.get(keyId);
  if (!key) throw new SealError('KeyMissing', `the key Secret has no key "${keyId}" (it holds: ${[...ring.keys()].join(', ') || 'none'})`);
  return { codec, key: { id: keyId, key } };
}

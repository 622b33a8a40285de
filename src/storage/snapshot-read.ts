import { etcdChecked } from '../etcd/snapshot-hash.js';
import { peekSealed, unseal } from './sealed.js';
import type { KeyRing } from './sealed.js';
import { verified } from './storage.js';
import type { StoredBytes } from './storage.js';

/**
 * A stored snapshot's bytes as a restore takes them, every check made in the one pass that reads them: the
 * store's sha256, the seal (each frame's tag; with keys given, only a sealed object is taken) and etcd's own hash
 * at its end. A snapshot stored as it is, not sealed, is hashed once for both sha256s (etcdChecked).
 */
export async function* restorableSnapshot(name: string, stored: StoredBytes, keys: KeyRing): AsyncIterable<Buffer> {
  const peeked = await peekSealed(stored.data);
  if (!peeked.sealed && keys.size === 0) {
    yield* etcdChecked(name, peeked.data, stored.accepted);
    return;
  }
  yield* etcdChecked(name, unseal(verified(name, { data: peeked.data, accepted: stored.accepted }), keys, name));
}

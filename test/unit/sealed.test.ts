import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { CODECS, SealError, seal, sealingKey, unseal } from '../../src/storage/sealed.js';
import type { KeyRing, SealOptions } from '../../src/storage/sealed.js';

const drain = async (it: AsyncIterable<Uint8Array>): Promise<Buffer> => {
  const parts: Buffer[] = [];
  for await (const c of it) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
};

/** Data like a snapshot's: compressible pages, random values, in uneven chunks as a gRPC stream brings them. */
function snapshotLike(bytes: number): Buffer[] {
  const data = Buffer.alloc(bytes);
  for (let at = 0; at < bytes; at += 4096) randomBytes(256).copy(data, at);
  const chunks: Buffer[] = [];
  for (let at = 0, size = 1; at < bytes; at += size, size = (size * 7 + 13) % 70_000 + 1) chunks.push(data.subarray(at, at + size));
  return chunks;
}

const sealed = async (chunks: Buffer[], o: SealOptions): Promise<Buffer> => drain(seal(Readable.from(chunks), o));
const opened = async (bytes: Buffer, keys: KeyRing = new Map()): Promise<Buffer> => drain(unseal(Readable.from([bytes]), keys, 'backup'));

const k1 = sealingKey('k1', randomBytes(32));
const k2 = sealingKey('k2', randomBytes(32));
const ring: KeyRing = new Map([[k1.id, k1.key], [k2.id, k2.key]]);

test('sealed backups: every codec, with and without a key, comes back byte for byte; frames are split across reads', async () => {
  const chunks = snapshotLike(3 * 1024 * 1024 + 12345);
  const original = Buffer.concat(chunks);
  for (const codec of CODECS) {
    for (const key of [undefined, k1]) {
      const bytes = await sealed(chunks, { codec, ...(key ? { key } : {}) });
      if (codec !== 'None') assert.ok(bytes.length < original.length / 4, `${codec} compresses snapshot-like data (${bytes.length} bytes)`);
      assert.ok(!bytes.includes(original.subarray(8192, 8192 + 64)) || (!key && codec === 'None'), 'an encrypted object holds no plaintext');
      // Delivered one byte short of a frame at a time: the reader joins and splits across every boundary.
      const odd: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += 65_521) odd.push(bytes.subarray(at, at + 65_521));
      assert.ok((await drain(unseal(Readable.from(odd), key ? ring : new Map(), 'backup'))).equals(original), `${codec} ${key ? 'encrypted' : 'plain'}`);
    }
  }
});

test('a plain snapshot (CoreOS, or ours without compression or key) passes through unchanged when no keys are named', async () => {
  const snapshot = Buffer.concat(snapshotLike(100_000));
  assert.ok((await opened(snapshot)).equals(snapshot));
  assert.ok((await opened(Buffer.from('tiny'))).equals(Buffer.from('tiny')));
});

test('with keys named, an object that is not encrypted (plain, or only compressed) is refused: whoever can write the bucket cannot strip the encryption', async () => {
  const snapshot = Buffer.concat(snapshotLike(100_000));
  const refused = (err: unknown): boolean => err instanceof SealError && err.reason === 'NotAuthentic' && /not encrypted/.test(err.message);
  await assert.rejects(opened(snapshot, ring), refused, 'a plain snapshot');
  await assert.rejects(opened(await sealed([snapshot], { codec: 'Brotli' }), ring), refused, 'a compressed one without a key');
  assert.ok((await opened(await sealed([snapshot], { codec: 'Gzip', key: k1 }), ring)).equals(snapshot), 'an encrypted one opens');
});

test('key rotation: objects sealed with an old key open while the ring holds it; a missing key is named', async () => {
  const original = Buffer.concat(snapshotLike(50_000));
  const old = await sealed([original], { codec: 'Brotli', key: k1 });
  const current = await sealed([original], { codec: 'Brotli', key: k2 });
  assert.ok((await opened(old, ring)).equals(original));
  assert.ok((await opened(current, ring)).equals(original));
  await assert.rejects(opened(old, new Map([[k2.id, k2.key]])), (err: unknown) =>
    err instanceof SealError && err.reason === 'KeyMissing' && /encrypted with key "k1".*holds: k2/.test(err.message));
});

test('a wrong key, a changed byte anywhere, a swapped header field or a cut-off end is refused, with a reason', async () => {
  const original = Buffer.concat(snapshotLike(2 * 1024 * 1024 + 777));
  const bytes = await sealed([original], { codec: 'Gzip', key: k1 });
  const refused = (what: string, damaged: Buffer, keys: KeyRing, pattern: RegExp): Promise<void> =>
    assert.rejects(opened(damaged, keys), (err: unknown) => err instanceof SealError && err.reason === 'NotAuthentic' && pattern.test(err.message), what);
  await refused('wrong key', bytes, new Map([['k1', randomBytes(32)]]), /does not open with key "k1"/);
  for (const at of [40, Math.floor(bytes.length / 2), bytes.length - 1]) {
    const changed = Buffer.from(bytes);
    changed[at] = (changed[at] ?? 0) ^ 1;
    await refused(`byte ${at} changed`, changed, ring, /changed/);
  }
  const codecSwapped = Buffer.from(bytes);
  codecSwapped[8] = 1; // Gzip → Brotli in the header: the header is every frame's associated data
  await refused('codec swapped', codecSwapped, ring, /does not open/);
  // Uncompressed, the data makes three frames: cut after the first, or inside the last.
  const framed = await sealed([original], { codec: 'None', key: k1 });
  const frame = 4 + 1024 * 1024 + 16;
  const header = 8 + 2 + 2 + 16 + 7;
  await refused('cut after a whole frame', framed.subarray(0, header + frame), ring, /cut off/);
  await refused('cut inside a frame', framed.subarray(0, framed.length - 10), ring, /changed or cut off/);
});

test('a key must be 32 bytes under a plain id', () => {
  assert.throws(() => sealingKey('k1', randomBytes(16)), /16 bytes; it must be 32/);
  assert.throws(() => sealingKey('a/b', randomBytes(32)), /key id "a\/b"/);
});

test('a reader that stops after the first block lets the source go (a store\'s answer is closed, not drained)', async () => {
  // Random bytes: compressed or not, several megabytes of object (three frames when encrypted).
  const chunks = [randomBytes(3 * 1024 * 1024)];
  for (const [codec, key] of [['None', undefined], ['Gzip', undefined], ['Brotli', k1]] as const) {
    const bytes = await sealed(chunks, { codec, ...(key ? { key } : {}) });
    let pulled = 0;
    let released = false;
    const source = async function* (): AsyncIterable<Buffer> {
      try {
        for (let at = 0; at < bytes.length; at += 65_536) {
          await Promise.resolve(); // as a socket's chunks come, one at a time
          pulled++;
          yield bytes.subarray(at, at + 65_536);
        }
      } finally {
        released = true;
      }
    };
    for await (const block of unseal(source(), key ? ring : new Map(), 'backup')) {
      assert.ok(block.length > 0);
      break;
    }
    assert.equal(released, true, `${codec}: the source was let go`);
    assert.ok(pulled < Math.ceil(bytes.length / 65_536), `${codec}: not read to its end (${pulled} blocks pulled)`);
  }
});

test('a source that fails under a codec (a store that stopped answering) is said as itself, not as a damaged stream', async () => {
  const bytes = await sealed(snapshotLike(1024 * 1024), { codec: 'Gzip' });
  const broken = async function* (): AsyncIterable<Buffer> {
    yield bytes.subarray(0, 100_000);
    await Promise.resolve();
    throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
  };
  await assert.rejects(drain(unseal(broken(), new Map(), 'backup')), (err: unknown) => !(err instanceof SealError) && /ECONNRESET/.test((err as Error).message));
  // A stream the codec itself cannot read is damaged.
  const damaged = Buffer.from(bytes);
  damaged.fill(0x55, 4000, 4100);
  await assert.rejects(opened(damaged), (err: unknown) => err instanceof SealError && err.reason === 'Malformed');
});

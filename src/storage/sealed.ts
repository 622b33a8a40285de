import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { Readable, pipeline } from 'node:stream';
import { constants, createBrotliCompress, createBrotliDecompress, createGzip, createGunzip } from 'node:zlib';
import type { Transform } from 'node:stream';
import { asBuffer } from './storage.js';

/**
 * A backup object, compressed and/or encrypted on the client side. Layout (all integers big-endian):
 *
 *   header: "EOPSEAL1" | codec (1 byte) | key id length (1 byte) | key id (UTF-8) | [salt (16) | nonce prefix (7)]
 *   body:   without a key, the codec's stream; with one, frames of at most FRAME_BYTES of it:
 *           ciphertext length (4) | AES-256-GCM ciphertext | tag (16)
 *
 * Each object has its own AES key, derived from the named key and a random salt (HKDF-SHA256), so a counter
 * nonce never repeats under a key. A frame's nonce is the prefix, its index (4) and a last-frame flag (1), and
 * the header is every frame's associated data: frames cannot be reordered, dropped, cut off after any frame
 * but the last, or moved to another object, and the codec or key id cannot be swapped, without the tag saying
 * so. Objects that do not start with the magic are plain etcd snapshots (CoreOS's, and ours without either).
 */
const MAGIC = Buffer.from('EOPSEAL1');
const SALT_BYTES = 16;
const PREFIX_BYTES = 7;
const TAG_BYTES = 16;
const FRAME_BYTES = 1024 * 1024;
const KEY_BYTES = 32;

export const CODECS = ['None', 'Brotli', 'Gzip'] as const;
export type Codec = (typeof CODECS)[number];

/** A named 32-byte key: new objects are sealed with it, and the name is recorded so the object can be opened later. */
export interface SealingKey { id: string; key: Buffer }

export interface SealOptions { codec: Codec; key?: SealingKey }

/** The keys a reader holds, by id (old ones stay, so objects sealed before a rotation still open). */
export type KeyRing = ReadonlyMap<string, Buffer>;

/** A backup that cannot be opened: the reason says which key is missing, or that the bytes are not what was sealed. */
export class SealError extends Error {
  constructor(readonly reason: 'KeyMissing' | 'NotAuthentic' | 'Malformed', message: string) {
    super(message);
    this.name = 'SealError';
  }
}

/** Whether the options change the bytes at all (else the snapshot is stored as it is, readable by etcdutl). */
export const seals = (o: SealOptions): boolean => o.codec !== 'None' || o.key !== undefined;

/** A key's bytes, checked: AES-256 wants exactly 32. */
export function sealingKey(id: string, key: Buffer): SealingKey {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(id)) throw new SealError('Malformed', `key id "${id}" must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit`);
  if (key.length !== KEY_BYTES) throw new SealError('Malformed', `key ${id} is ${key.length} bytes; it must be ${KEY_BYTES} (e.g. head -c 32 /dev/urandom)`);
  return { id, key };
}

/** The bytes of `source` sealed as the options say. */
export async function* seal(source: AsyncIterable<Uint8Array>, o: SealOptions): AsyncIterable<Buffer> {
  const keyId = Buffer.from(o.key?.id ?? '', 'utf8');
  const secret = o.key ? { salt: randomBytes(SALT_BYTES), prefix: randomBytes(PREFIX_BYTES) } : undefined;
  const header = headerOf(CODECS.indexOf(o.codec), keyId, secret);
  yield header;
  const packed = o.codec === 'None' ? source : through(source, compressor(o.codec));
  if (!o.key || !secret) {
    for await (const chunk of packed) yield Buffer.from(chunk as Uint8Array);
    return;
  }
  const key = objectKey(o.key.key, secret.salt);
  let index = 0;
  let held: Buffer | undefined;
  for await (const block of framed(packed)) {
    if (held) yield encryptFrame(key, secret.prefix, index++, false, header, held);
    held = block;
  }
  yield encryptFrame(key, secret.prefix, index, true, header, held ?? Buffer.alloc(0));
}

/**
 * The original bytes of a sealed object (or of a plain snapshot, passed through); throws SealError if it cannot.
 * With keys given, only an encrypted object is accepted: its frames' tags are what authenticates it, and a plain
 * or merely compressed object (with a sha256 beside it that anyone who can write the bucket can make) is not.
 */
export async function* unseal(source: AsyncIterable<Uint8Array>, keys: KeyRing, name: string): AsyncIterable<Buffer> {
  const reader = new ByteReader(source);
  try {
    yield* unsealFrom(reader, keys, name);
  } finally {
    // A reader that stops early (a restore's probe reads one block) ends the source too: a store's answer is
    // closed, not left open or drained.
    await reader.close();
  }
}

async function* unsealFrom(reader: ByteReader, keys: KeyRing, name: string): AsyncIterable<Buffer> {
  const magic = await reader.read(MAGIC.length);
  const unencrypted = (): SealError => new SealError('NotAuthentic', `${name} is not encrypted, but keys were given to read it: an object that is not sealed with one of them is refused (it could have been put there by anyone who can write the bucket); restore it without encryption keys if it is a backup you trust`);
  if (!magic.equals(MAGIC)) {
    if (keys.size > 0) throw unencrypted();
    yield magic;
    yield* reader.rest();
    return;
  }
  const [codecIndex = -1, idLength = 0] = await reader.read(2);
  const codec = CODECS[codecIndex];
  if (!codec) throw new SealError('Malformed', `${name}: unknown codec ${codecIndex}`);
  const keyIdBytes = await reader.read(idLength);
  const keyId = keyIdBytes.toString('utf8');
  if (!keyId && keys.size > 0) throw unencrypted();
  const secret = keyId ? { salt: await reader.read(SALT_BYTES), prefix: await reader.read(PREFIX_BYTES) } : undefined;
  const header = headerOf(codecIndex, keyIdBytes, secret);
  const master = keys.get(keyId);
  if (secret && !master) throw new SealError('KeyMissing', `${name} is encrypted with key "${keyId}", which the key Secret does not hold (it holds: ${[...keys.keys()].join(', ') || 'none'})`);
  const packed = secret && master ? decryptFrames(reader, objectKey(master, secret.salt), secret.prefix, header, keyId, name) : reader.rest();
  if (codec === 'None') {
    yield* packed;
    return;
  }
  try {
    for await (const chunk of through(packed, decompressor(codec))) yield chunk as Buffer;
  } catch (err) {
    // Only the codec's own complaint is a damaged stream; a store that stopped answering, or a sha256 that does
    // not match, is said as itself (the one may pass, the other is the object's).
    if (!codecError(err)) throw err;
    throw new SealError('Malformed', `${name}: its ${codec} stream is damaged: ${(err as Error).message}`);
  }
}

async function* decryptFrames(reader: ByteReader, key: Buffer, prefix: Buffer, header: Buffer, keyId: string, name: string): AsyncIterable<Buffer> {
  for (let index = 0; ; index++) {
    const length = await reader.read(4);
    if (length.length < 4) throw new SealError('NotAuthentic', `${name}: it ends inside frame ${index} (cut off)`);
    const frame = await reader.read(length.readUInt32BE(0) + TAG_BYTES);
    const last = await reader.atEnd();
    const plain = decryptFrame(key, prefix, index, last, header, frame);
    // The stream ends on a frame that opens as a middle one: everything after it is missing.
    if (!plain && last && decryptFrame(key, prefix, index, false, header, frame)) {
      throw new SealError('NotAuthentic', `${name}: it ends after frame ${index} without its last frame (cut off)`);
    }
    if (!plain) {
      throw new SealError('NotAuthentic', index === 0
        ? `${name}: does not open with key "${keyId}": the key is not the one it was sealed with, or the data was changed`
        : `${name}: frame ${index} fails authentication: the data was changed or cut off`);
    }
    yield plain;
    if (last) return;
  }
}

/** The header's bytes, as written and as every frame's associated data. */
function headerOf(codecIndex: number, keyId: Buffer, secret: { salt: Buffer; prefix: Buffer } | undefined): Buffer {
  return Buffer.concat([MAGIC, Buffer.from([codecIndex, keyId.length]), keyId, ...(secret ? [secret.salt, secret.prefix] : [])]);
}

function objectKey(master: Buffer, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', master, salt, 'etcd-operator backup v1', KEY_BYTES));
}

function nonce(prefix: Buffer, index: number, last: boolean): Buffer {
  const n = Buffer.alloc(PREFIX_BYTES + 5);
  prefix.copy(n);
  n.writeUInt32BE(index, PREFIX_BYTES);
  n[PREFIX_BYTES + 4] = last ? 1 : 0;
  return n;
}

function encryptFrame(key: Buffer, prefix: Buffer, index: number, last: boolean, header: Buffer, plain: Buffer): Buffer {
  const cipher = createCipheriv('aes-256-gcm', key, nonce(prefix, index, last)).setAAD(header);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length);
  return Buffer.concat([length, body, cipher.getAuthTag()]);
}

/** The frame's plaintext, or undefined when its tag does not match (wrong key, changed or misplaced bytes). */
function decryptFrame(key: Buffer, prefix: Buffer, index: number, last: boolean, header: Buffer, frame: Buffer): Buffer | undefined {
  if (frame.length < TAG_BYTES) return undefined;
  const decipher = createDecipheriv('aes-256-gcm', key, nonce(prefix, index, last)).setAAD(header);
  decipher.setAuthTag(frame.subarray(frame.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(frame.subarray(0, frame.length - TAG_BYTES)), decipher.final()]);
  } catch {
    return undefined;
  }
}

/** The stream in blocks of exactly FRAME_BYTES (the last shorter), so every frame but the last is full. */
async function* framed(source: AsyncIterable<unknown>): AsyncIterable<Buffer> {
  let parts: Buffer[] = [];
  let held = 0;
  for await (const chunk of source) {
    let b = Buffer.from(chunk as Uint8Array);
    while (held + b.length >= FRAME_BYTES) {
      const take = FRAME_BYTES - held;
      yield Buffer.concat([...parts, b.subarray(0, take)], FRAME_BYTES);
      b = b.subarray(take);
      parts = [];
      held = 0;
    }
    if (b.length > 0) {
      parts.push(b);
      held += b.length;
    }
  }
  if (held > 0) yield Buffer.concat(parts, held);
}

// Brotli at quality 3 and gzip at level 1: the measured balance of ratio and speed (docs/decisions.md); both
// run on libuv's thread pool, off the JavaScript thread that moves the stream.
function compressor(codec: Exclude<Codec, 'None'>): Transform {
  return codec === 'Brotli' ? createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 3 } }) : createGzip({ level: 1 });
}

function decompressor(codec: Exclude<Codec, 'None'>): Transform {
  return codec === 'Brotli' ? createBrotliDecompress() : createGunzip();
}

/** The source through a transform; an error on either side ends the iteration with that error (pipe would hang). */
function through(source: AsyncIterable<Uint8Array>, transform: Transform): AsyncIterable<unknown> {
  return pipeline(Readable.from(source), transform, () => undefined);
}

/** zlib's errors (Z_DATA_ERROR, Z_BUF_ERROR…) and Brotli's (ERR__ERROR_FORMAT_…): what a damaged stream raises. */
const codecError = (err: unknown): boolean => {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^(Z_|ERR__ERROR|ERR_BROTLI)/.test(code);
};

/** Exact-length reads from a stream of chunks (joined once per read, not once per chunk). */
class ByteReader {
  private readonly it: AsyncIterator<Uint8Array>;
  private parts: Buffer[] = [];
  private held = 0;
  private done = false;

  constructor(source: AsyncIterable<Uint8Array>) {
    this.it = source[Symbol.asyncIterator]();
  }

  private async fill(n: number): Promise<void> {
    while (this.held < n && !this.done) {
      const next = await this.it.next();
      if (next.done) this.done = true;
      else {
        this.parts.push(asBuffer(next.value));
        this.held += next.value.length;
      }
    }
  }

  /** n bytes, or fewer if the stream ends first. */
  async read(n: number): Promise<Buffer> {
    await this.fill(n);
    const all = this.parts.length === 1 ? this.parts[0] ?? Buffer.alloc(0) : Buffer.concat(this.parts, this.held);
    const out = all.subarray(0, n);
    const left = all.subarray(out.length);
    this.parts = left.length > 0 ? [left] : [];
    this.held = left.length;
    return out;
  }

  /** Lets the source go (its return()), read to its end or not. */
  async close(): Promise<void> {
    await this.it.return?.();
  }

  async atEnd(): Promise<boolean> {
    await this.fill(1);
    return this.held === 0;
  }

  async* rest(): AsyncIterable<Buffer> {
    yield* this.parts;
    this.parts = [];
    this.held = 0;
    for (;;) {
      const next = await this.it.next();
      if (next.done) return;
      yield asBuffer(next.value);
    }
  }
}

/** Whether the object is sealed (compressed or encrypted by a backup), from its first bytes; all of them read on. */
export async function peekSealed(source: AsyncIterable<Uint8Array>): Promise<{ sealed: boolean; data: AsyncIterable<Buffer> }> {
  const reader = new ByteReader(source);
  const head = await reader.read(MAGIC.length).catch(async (err: unknown) => {
    await reader.close().catch(() => undefined);
    throw err;
  });
  async function* all(): AsyncIterable<Buffer> {
    try {
      yield head;
      yield* reader.rest();
    } finally {
      await reader.close();
    }
  }
  return { sealed: head.equals(MAGIC), data: all() };
}

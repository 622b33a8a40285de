/**
 * The revision an etcd snapshot holds, read from its bytes as they stream past. etcd sends none with a snapshot,
 * and the member's revision read before the call is older than the snapshot's under writes (a user's trial: 2433
 * named, 2495 held), so a backup's status said less than it held.
 *
 * A snapshot is a bbolt file as one read transaction saw it: its first page is that transaction's meta page (the
 * root of its tree), then every page of the file. The pages its tree reaches do not change while the transaction
 * is open; the others may hold anything (a free page what it last held or what a later write put there, newer
 * revisions included; an overflow page a value's bytes). So only the tree is followed, once the stream has ended:
 * from the root bucket's entry "key" (etcd's revisions, keyed by revision) down its rightmost branches to its last
 * key, the newest revision. As the pages pass, each page-sized slot is read as if it began a page, and what it
 * would add to that walk is kept (8 bytes a slot: 2.4 MB for 1.2 GB); the slots the walk reaches are pages.
 */

const META_MAGIC = 0xed0cdaed;
/** The page header and the meta as far as the high-water page id: magic, version, page size, flags, root bucket (root, sequence), freelist, pgid. */
const META_BYTES = 16 + 48;
const PAGE_HEADER = 16;
const ELEMENT = 16;
const BRANCH_PAGE = 0x01;
const LEAF_PAGE = 0x02;
const BUCKET_LEAF = 0x01;
const KEY_BUCKET = Buffer.from('key');
/** A bbolt tree is never this deep; a walk longer than this is a page table that is not one. */
const MAX_DEPTH = 64;
/** Bytes asked of the stream and not yet come, at most (see want). */
const MAX_WAITING = 4096;

/** Bytes wanted from further on in the stream, and what to do with them once they have come. */
interface Capture { at: number; bytes: Buffer; filled: number; then: (bytes: Buffer) => void }

export class SnapshotRevision {
  private pageSize = 0;
  private rootPage = 0;
  /** Per slot: a leaf's newest revision (>= 0), a branch's rightmost child as -(pgid + 1); NaN for the rest. */
  private pages = new Float64Array(0);
  /** The key bucket: its root page, or (a bucket small enough to be kept inline) its newest revision. */
  private keyBucket: { root: number } | { inline: number } | undefined;
  private captures: Capture[] = [];
  /** The slot being filled when a chunk ends within it, and how far; where the stream is. */
  private slot = Buffer.alloc(META_BYTES);
  private slotFill = 0;
  private offset = 0;
  private broken = false;

  /** Passes the snapshot through unchanged, reading it on the way. */
  async *pass(source: AsyncIterable<Buffer>): AsyncIterable<Buffer> {
    for await (const chunk of source) {
      if (!this.broken) this.feed(chunk);
      yield chunk;
    }
  }

  /**
   * The newest revision in the snapshot's tree, once it has all passed; 0 for a store that holds no key revision (no
   * key was ever written); undefined if it was not a bbolt file as etcd makes them.
   */
  revision(): number | undefined {
    if (this.broken || !this.keyBucket) return undefined;
    if ('inline' in this.keyBucket) return Number.isNaN(this.keyBucket.inline) ? undefined : this.keyBucket.inline;
    let page = this.keyBucket.root;
    for (let depth = 0; depth < MAX_DEPTH; depth++) {
      const v = this.pages[page];
      if (v === undefined || Number.isNaN(v)) return undefined;
      if (v >= 0) return v;
      page = -v - 1;
    }
    return undefined;
  }

  private feed(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length && !this.broken) {
      const size = this.pageSize === 0 ? META_BYTES : this.pageSize;
      if (this.slotFill === 0 && chunk.length - at >= size) {
        this.slotDone(chunk.subarray(at, at + size));
        at += size;
        continue;
      }
      const copied = chunk.copy(this.slot, this.slotFill, at, Math.min(chunk.length, at + size - this.slotFill));
      this.slotFill += copied;
      at += copied;
      if (this.slotFill === size) {
        this.slotFill = 0;
        this.slotDone(this.slot);
      }
    }
  }

  private slotDone(slot: Buffer): void {
    if (this.pageSize === 0) {
      this.readMeta(slot);
      if (this.broken) return;
      // The rest of the first page is taken as a slot of its own size, then passed over.
      this.slot = Buffer.alloc(this.pageSize);
      slot.copy(this.slot);
      this.slotFill = slot.length;
      return;
    }
    const start = this.offset;
    this.offset += slot.length;
    this.readSlot(start / this.pageSize, slot);
    // The slot's bytes to every read waiting for them: earlier slots', and its own (which may ask for more within it).
    while (this.capture(start, slot));
  }

  private readMeta(slot: Buffer): void {
    this.pageSize = slot.readUInt32LE(PAGE_HEADER + 8);
    this.rootPage = u64(slot, PAGE_HEADER + 16);
    const highWater = u64(slot, PAGE_HEADER + 40);
    if (slot.readUInt32LE(PAGE_HEADER) !== META_MAGIC || this.pageSize < 512 || this.pageSize > 65536 || highWater > 2 ** 28) {
      this.broken = true;
      return;
    }
    this.pages = new Float64Array(highWater).fill(NaN);
  }

  /**
   * A slot read as the head of a page: what a branch or leaf would add to the walk, asked of the bytes where its last
   * element lies (they may be further on, in its overflow). A slot that could not head one is passed over.
   */
  private readSlot(id: number, slot: Buffer): void {
    // Bytes read as they are where it is hot: the operator runs without V8's compilers, and Buffer's readers are
    // JavaScript it would interpret for each of a gigabyte's 300,000 slots.
    // A page's header names its own id: bytes of a value, or anything else that is no page here, do not (a value
    // made to look like pages would otherwise have each ask for bytes further on, without end).
    if (id < 2 || id >= this.pages.length || slot[9] !== 0 || u64(slot, 0) !== id) return;
    const flags = slot[8] ?? 0;
    const count = (slot[10] ?? 0) | ((slot[11] ?? 0) << 8);
    const span = (slot.readUInt32LE(12) + 1) * this.pageSize;
    const start = id * this.pageSize;
    if ((flags !== BRANCH_PAGE && flags !== LEAF_PAGE) || PAGE_HEADER + count * ELEMENT > span || id + span / this.pageSize > this.pages.length) return;
    // An empty leaf: the key bucket of a store no key was ever written to (its revision is the member's own).
    if (count === 0) {
      if (flags === LEAF_PAGE) this.pages[id] = 0;
      return;
    }
    if (id === this.rootPage) {
      if (flags === LEAF_PAGE) this.want(start, span, (page) => { this.readRootBucket(page, count); });
      return;
    }
    // Read from the slot itself where the bytes are in it (most pages: no overflow); asked of the stream otherwise.
    const last = PAGE_HEADER + (count - 1) * ELEMENT;
    if (flags === BRANCH_PAGE) {
      if (last + ELEMENT <= slot.length) this.pages[id] = -(u64(slot, last + 8) + 1);
      else this.want(start + last + 8, 8, (pgid) => { this.pages[id] = -(u64(pgid, 0) + 1); });
      return;
    }
    if (last + ELEMENT <= slot.length) this.readLastKey(id, slot, last, slot, last, span);
    else this.want(start + last, ELEMENT, (element) => { this.readLastKey(id, slot, last, element, 0, span); });
  }

  /** A leaf's last key, by its element (at `at` in `element`, at `last` in the page): from the slot, or asked of the stream. */
  private readLastKey(id: number, slot: Buffer, last: number, element: Buffer, at: number, span: number): void {
    const keyAt = last + element.readUInt32LE(at + 4);
    const size = element.readUInt32LE(at + 8);
    if (!isRevisionKey(size) || keyAt + size > span) return;
    if (keyAt + size <= slot.length) this.pages[id] = revisionOf(slot, keyAt);
    else this.want(id * this.pageSize + keyAt, size, (key) => { this.pages[id] = revisionOf(key, 0); });
  }

  /** The root bucket (one leaf page: etcd keeps a dozen buckets): where its "key" bucket is. */
  private readRootBucket(page: Buffer, count: number): void {
    for (let i = 0; i < count; i++) {
      const element = PAGE_HEADER + i * ELEMENT;
      const keyAt = element + page.readUInt32LE(element + 4);
      const keySize = page.readUInt32LE(element + 8);
      const value = keyAt + keySize;
      if (!(page.readUInt32LE(element) & BUCKET_LEAF) || value + 16 > page.length || !page.subarray(keyAt, value).equals(KEY_BUCKET)) continue;
      const root = u64(page, value);
      // A small bucket is kept inline: its one leaf page follows its header, within the value.
      this.keyBucket = root === 0 ? { inline: inlineRevision(page.subarray(value + 16, value + page.readUInt32LE(element + 12))) } : { root };
    }
  }

  private want(at: number, length: number, then: (bytes: Buffer) => void): void {
    // Pages ask for bytes of their own span only, and few pages span others: this many waiting is no etcd database.
    if (this.captures.length >= MAX_WAITING) {
      this.broken = true;
      return;
    }
    this.captures.push({ at, bytes: Buffer.alloc(length), filled: 0, then });
  }

  /** Gives every capture the bytes of `slot` (at `start`) it wants; runs those now whole (which may want more); whether any ran. */
  private capture(start: number, slot: Buffer): boolean {
    if (this.captures.length === 0) return false;
    const end = start + slot.length;
    const whole: Capture[] = [];
    this.captures = this.captures.filter((c) => {
      const from = Math.max(c.at + c.filled, start);
      const to = Math.min(c.at + c.bytes.length, end);
      if (from < to) c.filled += slot.copy(c.bytes, from - c.at, from - start, to - start);
      if (c.filled < c.bytes.length) return c.at + c.bytes.length > start;
      whole.push(c);
      return false;
    });
    for (const c of whole) c.then(c.bytes);
    return whole.length > 0;
  }
}

/** etcd's revision key: 8 bytes of main revision, '_', 8 bytes of sub revision, and a 't' for a deletion. */
const isRevisionKey = (size: number): boolean => size === 17 || size === 18;

/** A little-endian uint64 (a page id: below 2^53), without a BigInt for each of the many pages. */
const u64 = (b: Buffer, at: number): number => b.readUInt32LE(at + 4) * 0x1_0000_0000 + b.readUInt32LE(at);

/** The main revision of the etcd revision key at `at` ('_' between its two halves); NaN for any other key. */
function revisionOf(key: Buffer, at: number): number {
  return key[at + 8] === 0x5f ? key.readUInt32BE(at) * 0x1_0000_0000 + key.readUInt32BE(at + 4) : NaN;
}

/** The last key's revision of a bucket kept inline: its one leaf page, within its entry's value. */
function inlineRevision(page: Buffer): number {
  if (page.length < PAGE_HEADER) return NaN;
  const count = page.readUInt16LE(10);
  if (count === 0) return 0;
  const element = PAGE_HEADER + (count - 1) * ELEMENT;
  if (element + ELEMENT > page.length) return NaN;
  const keyAt = element + page.readUInt32LE(element + 4);
  const size = page.readUInt32LE(element + 8);
  return isRevisionKey(size) && keyAt + size <= page.length ? revisionOf(page, keyAt) : NaN;
}

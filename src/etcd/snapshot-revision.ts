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
/** etcd's revision key: 8 bytes of main revision, '_', 8 bytes of sub revision, and a 't' for a deletion. */
const REVISION_KEY = [17, 18];
const KEY_BUCKET = Buffer.from('key');
/** A bbolt tree is never this deep; a walk longer than this is a page table that is not one. */
const MAX_DEPTH = 64;

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

  /** The newest revision in the snapshot's tree, once it has all passed; undefined if it was not a bbolt file as etcd makes them. */
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
    this.capture(start, slot);
    this.readSlot(start / this.pageSize, slot);
    // What the slot asked for may lie within it, and so may what that asks for in turn.
    while (this.capture(start, slot));
  }

  private readMeta(slot: Buffer): void {
    this.pageSize = slot.readUInt32LE(PAGE_HEADER + 8);
    this.rootPage = Number(slot.readBigUInt64LE(PAGE_HEADER + 16));
    const highWater = Number(slot.readBigUInt64LE(PAGE_HEADER + 40));
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
    if (id < 2 || id >= this.pages.length) return;
    const flags = slot.readUInt16LE(8);
    const count = slot.readUInt16LE(10);
    const span = (slot.readUInt32LE(12) + 1) * this.pageSize;
    const start = id * this.pageSize;
    if ((flags !== BRANCH_PAGE && flags !== LEAF_PAGE) || count === 0 || PAGE_HEADER + count * ELEMENT > span || id + span / this.pageSize > this.pages.length) return;
    if (id === this.rootPage) {
      if (flags === LEAF_PAGE) this.want(start, span, (page) => { this.readRootBucket(page, count); });
      return;
    }
    const last = PAGE_HEADER + (count - 1) * ELEMENT;
    if (flags === BRANCH_PAGE) {
      this.want(start + last + 8, 8, (pgid) => { this.pages[id] = -(Number(pgid.readBigUInt64LE(0)) + 1); });
      return;
    }
    this.want(start + last, ELEMENT, (element) => {
      const keyAt = last + element.readUInt32LE(4);
      const size = element.readUInt32LE(8);
      if (!REVISION_KEY.includes(size) || keyAt + size > span) return;
      this.want(start + keyAt, size, (key) => { this.pages[id] = revisionOf(key); });
    });
  }

  /** The root bucket (one leaf page: etcd keeps a dozen buckets): where its "key" bucket is. */
  private readRootBucket(page: Buffer, count: number): void {
    for (let i = 0; i < count; i++) {
      const element = PAGE_HEADER + i * ELEMENT;
      const keyAt = element + page.readUInt32LE(element + 4);
      const keySize = page.readUInt32LE(element + 8);
      const value = keyAt + keySize;
      if (!(page.readUInt32LE(element) & BUCKET_LEAF) || value + 16 > page.length || !page.subarray(keyAt, value).equals(KEY_BUCKET)) continue;
      const root = Number(page.readBigUInt64LE(value));
      // A small bucket is kept inline: its one leaf page follows its header, within the value.
      this.keyBucket = root === 0 ? { inline: inlineRevision(page.subarray(value + 16, value + page.readUInt32LE(element + 12))) } : { root };
    }
  }

  private want(at: number, length: number, then: (bytes: Buffer) => void): void {
    this.captures.push({ at, bytes: Buffer.alloc(length), filled: 0, then });
  }

  /** Gives every capture the bytes of `slot` (at `start`) it wants; runs those now whole (which may want more); whether any ran. */
  private capture(start: number, slot: Buffer): boolean {
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

/** The main revision of an etcd revision key ('_' between its two halves); NaN for any other key. */
function revisionOf(key: Buffer): number {
  return key[8] === 0x5f ? Number(key.readBigUInt64BE(0)) : NaN;
}

/** The last key's revision of a bucket kept inline: its one leaf page, within its entry's value. */
function inlineRevision(page: Buffer): number {
  if (page.length < PAGE_HEADER) return NaN;
  const count = page.readUInt16LE(10);
  const element = PAGE_HEADER + (count - 1) * ELEMENT;
  if (count === 0 || element + ELEMENT > page.length) return NaN;
  const keyAt = element + page.readUInt32LE(element + 4);
  const size = page.readUInt32LE(element + 8);
  return REVISION_KEY.includes(size) && keyAt + size <= page.length ? revisionOf(page.subarray(keyAt, keyAt + size)) : NaN;
}

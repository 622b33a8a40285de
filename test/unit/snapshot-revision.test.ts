import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SnapshotRevision } from '../../src/etcd/snapshot-revision.js';

// bbolt's layout as the reader takes it (go.etcd.io/bbolt page.go): a 16-byte page header (id, flags, count,
// overflow), 16-byte elements, keys and values after them; page 0 the meta. Built here to hold what a real
// snapshot may: a tree, free pages with newer revisions, overflow. Real snapshots are read in backup-revision.test.
const PAGE = 4096;

/** etcd's revision key: main, '_', sub (and 't' for a deletion). */
function revisionKey(main: number, deleted = false): Buffer {
  const key = Buffer.alloc(deleted ? 18 : 17);
  key.writeBigUInt64BE(BigInt(main), 0);
  key[8] = 0x5f;
  if (deleted) key[17] = 0x74;
  return key;
}

/** A page (with as many overflow pages as its bytes need) of `flags`, whose elements are `entries`. */
function page(flags: number, entries: { key: Buffer; value?: Buffer; child?: number; bucket?: boolean }[]): Buffer {
  const head = 16 + entries.length * 16;
  const data = Buffer.concat(entries.flatMap((e) => [e.key, e.value ?? Buffer.alloc(0)]));
  const pages = Math.ceil((head + data.length) / PAGE);
  const p = Buffer.alloc(pages * PAGE);
  p.writeUInt16LE(flags, 8);
  p.writeUInt16LE(entries.length, 10);
  p.writeUInt32LE(pages - 1, 12);
  let at = head;
  entries.forEach((e, i) => {
    const el = 16 + i * 16;
    if (flags === 1) {
      p.writeUInt32LE(at - el, el);
      p.writeUInt32LE(e.key.length, el + 4);
      p.writeBigUInt64LE(BigInt(e.child ?? 0), el + 8);
    } else {
      p.writeUInt32LE(e.bucket ? 1 : 0, el);
      p.writeUInt32LE(at - el, el + 4);
      p.writeUInt32LE(e.key.length, el + 8);
      p.writeUInt32LE(e.value?.length ?? 0, el + 12);
    }
    at += e.key.copy(p, at);
    at += e.value?.copy(p, at) ?? 0;
  });
  return p;
}

/** A bucket's value in its parent: its root page, or 0 and the page itself inline. */
function bucket(root: number, inline?: Buffer): Buffer {
  const header = Buffer.alloc(16);
  header.writeBigUInt64LE(BigInt(root), 0);
  return inline ? Buffer.concat([header, inline]) : header;
}

/** A snapshot of `pages` (by id from 2; meta 0 and 1 made here), the root bucket at `root`, and etcd's 32-byte hash after. */
function snapshot(root: number, pages: Map<number, Buffer>): Buffer {
  const highWater = Math.max(...[...pages].map(([id, p]) => id + p.length / PAGE));
  const file = Buffer.alloc(highWater * PAGE);
  for (const [id, p] of pages) {
    p.copy(file, id * PAGE);
    // bbolt writes each page's own id into its header.
    file.writeBigUInt64LE(BigInt(id), id * PAGE);
  }
  for (const id of [0, 1]) {
    const meta = id * PAGE;
    file.writeUInt16LE(0x04, meta + 8);
    file.writeUInt32LE(0xed0cdaed, meta + 16);
    file.writeUInt32LE(2, meta + 20);
    file.writeUInt32LE(PAGE, meta + 24);
    file.writeBigUInt64LE(BigInt(root), meta + 32);
    file.writeBigUInt64LE(BigInt(highWater), meta + 56);
  }
  return Buffer.concat([file, Buffer.alloc(32, 7)]);
}

const rootBucket = (keyBucket: Buffer): Buffer => page(2, [
  { key: Buffer.from('alarm'), value: bucket(0, page(2, [])).subarray(0, 32), bucket: true },
  { key: Buffer.from('key'), value: keyBucket, bucket: true },
  { key: Buffer.from('meta'), value: bucket(0, page(2, [{ key: Buffer.from('consistent_index'), value: Buffer.alloc(8) }])).subarray(0, 80), bucket: true },
]);

async function read(bytes: Buffer, chunk: number): Promise<number | undefined> {
  const reader = new SnapshotRevision();
  const chunks = (async function* split(): AsyncIterable<Buffer> {
    for (let at = 0; at < bytes.length; at += chunk) {
      await Promise.resolve();
      yield bytes.subarray(at, at + chunk);
    }
  })();
  const passed: Buffer[] = [];
  for await (const c of reader.pass(chunks)) passed.push(c);
  assert.ok(Buffer.concat(passed).equals(bytes), 'passed through unchanged');
  return reader.revision();
}

test('the revision a snapshot holds is its key bucket\'s last key, down the tree\'s rightmost branches, whatever the chunks it comes in', async () => {
  const v = (n: number): Buffer => Buffer.alloc(n, 1);
  const pages = new Map<number, Buffer>([
    // The key bucket: a branch (at 9, after its children) over two leaves; the last one's values overflow, so its
    // last key lies past its first page.
    [2, page(2, [{ key: revisionKey(5), value: v(40) }, { key: revisionKey(6), value: v(40) }])],
    [3, page(2, [{ key: revisionKey(7), value: v(9000) }, { key: revisionKey(8, true), value: v(10) }])],
    [9, page(1, [{ key: revisionKey(5), child: 2 }, { key: revisionKey(7), child: 3 }])],
    // A free page that once was (or a later write made) a leaf of newer revisions: not in this snapshot's tree.
    [10, page(2, [{ key: revisionKey(99), value: v(10) }])],
    [11, rootBucket(bucket(9))],
  ]);
  const bytes = snapshot(11, pages);
  for (const chunk of [7, 4096, 32_768, bytes.length]) assert.equal(await read(bytes, chunk), 8, `in chunks of ${chunk}`);
});

test('a key bucket small enough to be kept inline is read from its entry in the root bucket', async () => {
  const inline = page(2, [{ key: revisionKey(1), value: Buffer.alloc(12) }, { key: revisionKey(2), value: Buffer.alloc(12) }]);
  const bytes = snapshot(2, new Map([[2, rootBucket(bucket(0, inline.subarray(0, 16 + 32 + 17 * 2 + 24)))]]));
  assert.equal(await read(bytes, 100), 2);
});

test('bytes that are not a bbolt file as etcd makes them give no revision, and pass through all the same', async () => {
  assert.equal(await read(Buffer.alloc(20_000, 3), 1000), undefined, 'no meta page');
  const noKeyBucket = snapshot(2, new Map([[2, page(2, [{ key: Buffer.from('meta'), value: bucket(5), bucket: true }])]]));
  assert.equal(await read(noKeyBucket, 4096), undefined, 'no key bucket');
  // The tree points at a page that is no leaf or branch (a walk with nowhere to go).
  const dangling = snapshot(3, new Map([[2, Buffer.alloc(PAGE)], [3, rootBucket(bucket(2))]]));
  assert.equal(await read(dangling, 4096), undefined, 'a key bucket root that is no page');
});

test('a store no key was written to holds revision 0 by its tree (the member\'s own stands); forged pages in a value cost a bounded wait, not one without end', async () => {
  assert.equal(await read(snapshot(3, new Map([[2, page(2, [])], [3, rootBucket(bucket(2))]])), 4096), 0, 'an empty key bucket');
  assert.equal(await read(snapshot(2, new Map([[2, rootBucket(bucket(0, page(2, []).subarray(0, 16)))]])), 4096), 0, 'an empty inline key bucket');
  // A value of slots each forged as the head of a leaf (its own id in it) whose last key lies `ahead` bytes on: each
  // waits for bytes further on. Near, they resolve to nothing and the tree's answer stands; far, so many wait at
  // once that the reader gives up (the member's revision stands) instead of checking each against every slot.
  const forging = (ahead: number): Map<number, Buffer> => {
    const slots = 6000;
    const forged = Buffer.alloc(slots * PAGE);
    for (let i = 0; i < slots; i++) {
      const at = i * PAGE;
      forged.writeBigUInt64LE(BigInt(4 + i), at);
      forged.writeUInt16LE(2, at + 8);
      forged.writeUInt16LE(1, at + 10);
      forged.writeUInt32LE(ahead / PAGE + 1, at + 12);
      forged.writeUInt32LE(ahead, at + 16 + 4);
      forged.writeUInt32LE(17, at + 16 + 8);
    }
    // The value starts after page 3's header, element and key (49 bytes): padded so that its slots are slots.
    const value = Buffer.concat([Buffer.alloc(PAGE - 16 - 16 - 17), forged]);
    return new Map([[2, rootBucket(bucket(3))], [3, page(2, [{ key: revisionKey(9), value }])], [4 + slots + ahead / PAGE + 2, page(2, [])]]);
  };
  for (const [ahead, expected] of [[PAGE * 256, 9], [PAGE * 8000, undefined]] as const) {
    const started = performance.now();
    assert.equal(await read(snapshot(2, forging(ahead)), 32_768), expected, `keys forged ${ahead} bytes ahead`);
    assert.ok(performance.now() - started < 5000, `in ${Math.round(performance.now() - started)} ms`);
  }
});

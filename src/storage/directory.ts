import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { CHECKSUM_SUFFIX, FILE_BLOCK_BYTES, coalesced, measured, verified } from './storage.js';
import type { BackupStorage, StoredObject } from './storage.js';

const FLUSH_EVERY_BYTES = 64 * 1024 * 1024;

/** Snapshots as files under a directory (a mounted volume). Names may not leave the directory. */
export class DirectoryStorage implements BackupStorage {
  constructor(private readonly root: string) {}

  private path(name: string): string {
    const p = resolve(this.root, name);
    if (relative(this.root, p).startsWith('..') || p === resolve(this.root)) throw new Error(`${name}: not a path inside the backup volume`);
    return p;
  }

  async put(name: string, data: AsyncIterable<Uint8Array>): Promise<StoredObject> {
    const path = this.path(name);
    await mkdir(dirname(path), { recursive: true });
    // Hashed in the blocks it is written in: far fewer calls than etcd's chunks.
    const m = measured(coalesced(data, FILE_BLOCK_BYTES));
    // Written aside, flushed to disk and renamed: a reader never sees half a snapshot under the final name,
    // and a backup reported taken survives a crash of the node (etcdctl syncs its file too). etcd streams
    // 32 KiB chunks; they are written 1 MiB at a time, which pays for the sync.
    const file = await open(`${path}.partial`, 'w');
    try {
      // Flushed as it goes, one flush at a time beside the writes: the disk works while the stream arrives,
      // instead of taking the whole snapshot at the final sync.
      let flushing: Promise<void> = Promise.resolve();
      let unflushed = 0;
      for await (const block of m.data) {
        await file.write(block);
        unflushed += block.length;
        if (unflushed >= FLUSH_EVERY_BYTES) {
          await flushing;
          flushing = file.datasync();
          // Awaited before the next flush or at the end; if a write fails first, its failure is the one reported.
          flushing.catch(() => undefined);
          unflushed = 0;
        }
      }
      await flushing;
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(`${path}.partial`, path);
    const { size, sha256 } = m.result();
    await writeFile(`${path}${CHECKSUM_SUFFIX}`, `${sha256}\n`);
    return { name, size, sha256 };
  }

  async *get(name: string): AsyncIterable<Buffer> {
    const path = this.path(name);
    const expected = await readFile(`${path}${CHECKSUM_SUFFIX}`, 'utf8').catch(() => '');
    yield* verified(name, createReadStream(path, { highWaterMark: FILE_BLOCK_BYTES }) as AsyncIterable<Buffer>, expected);
  }

  async list(prefix: string): Promise<string[]> {
    const dir = dirname(this.path(`${prefix}x`));
    const base = relative(this.root, dir);
    const entries = await readdir(dir).catch(() => []);
    return entries
      .map((f) => (base ? join(base, f) : f))
      .filter((n) => n.startsWith(prefix) && !n.endsWith(CHECKSUM_SUFFIX) && !n.endsWith('.partial'))
      .sort();
  }

  async remove(name: string): Promise<void> {
    const path = this.path(name);
    await rm(path, { force: true });
    await rm(`${path}${CHECKSUM_SUFFIX}`, { force: true });
  }
}

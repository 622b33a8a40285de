import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { CHECKSUM_SUFFIX, committed, measured, verified } from './storage.js';
import { FILE_BLOCK_BYTES, writeInBlocks } from './file-blocks.js';
import type { BackupStorage, StoredObject } from './storage.js';

const FLUSH_EVERY_BYTES = 64 * 1024 * 1024;

/** A small file written and flushed to disk: a node that crashes after it returns still has it whole. */
async function writeSynced(path: string, text: string): Promise<void> {
  const file = await open(path, 'w');
  try {
    await file.writeFile(text);
    await file.sync();
  } finally {
    await file.close();
  }
}

/** The directory's entries flushed to disk: a rename done before a crash is still done after it. */
async function syncDirectory(path: string): Promise<void> {
  const dir = await open(path, 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

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
    const m = measured(data);
    // Written aside, flushed to disk and renamed: a reader never sees half a snapshot under the final name,
    // and a backup reported taken survives a crash of the node (etcdctl syncs its file too).
    const file = await open(`${path}.partial`, 'w');
    try {
      await writeInBlocks(file, m.data, { flushEveryBytes: FLUSH_EVERY_BYTES });
      await file.sync();
    } finally {
      await file.close();
    }
    const { size, sha256 } = m.result();
    // The sha256 first, the data's rename last: a put cut short leaves no file without its sha256 (the
    // operator's node lost between the two would have left one that a change log counts as stored).
    const checksum = `${path}${CHECKSUM_SUFFIX}`;
    try {
      await writeSynced(checksum, `${sha256}\n`);
      await rename(`${path}.partial`, path);
      await syncDirectory(dirname(path));
    } catch (err) {
      await rm(`${path}.partial`, { force: true }).catch(() => undefined);
      await rm(checksum, { force: true }).catch(() => undefined);
      throw err;
    }
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
    return committed(entries.map((f) => (base ? join(base, f) : f)).filter((n) => n.startsWith(prefix)));
  }

  async remove(name: string): Promise<void> {
    const path = this.path(name);
    await rm(path, { force: true });
    await rm(`${path}${CHECKSUM_SUFFIX}`, { force: true });
  }
}

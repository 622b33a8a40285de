import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { CHECKSUM_SUFFIX, checksumText, checksumsOf, committed, measured, verified } from './storage.js';
import { FILE_BLOCK_BYTES, writeInBlocks } from './file-blocks.js';
import type { BackupStorage, StoredBytes, StoredObject } from './storage.js';

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

/**
 * A small file replaced whole: written aside, flushed and renamed over the old one, so that a crash leaves
 * the old text or the new, never a file cut short (a checksum file half written would refuse its object).
 */
async function replaceSynced(path: string, text: string): Promise<void> {
  await writeSynced(`${path}.partial`, text);
  await rename(`${path}.partial`, path);
}

/** A checksum file's text, '' when there is none; a file that cannot be read is an error, not a missing sha256. */
async function readChecksum(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
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
    const partial = `${path}.partial`;
    const checksum = `${path}${CHECKSUM_SUFFIX}`;
    /** The checksum file before this put wrote its own: undefined until it has, '' when there was none. */
    let replaced: string | undefined;
    let renamed = false;
    try {
      // Written aside, flushed to disk and renamed: a reader never sees half a snapshot under the final name,
      // and a backup reported taken survives a crash of the node (etcdctl syncs its file too).
      const file = await open(partial, 'w');
      try {
        await writeInBlocks(file, m.data, { flushEveryBytes: FLUSH_EVERY_BYTES });
        await file.sync();
      } finally {
        await file.close();
      }
      const { size, sha256 } = m.result();
      // The sha256 first, the data's rename last: a put cut short leaves no file without its sha256 (the
      // operator's node lost between the two would have left one that a change log counts as stored), and a
      // file it replaces still reads back meanwhile (`checksumText`).
      const previous = await readChecksum(checksum);
      await replaceSynced(checksum, checksumText(sha256, previous));
      replaced = previous;
      await rename(partial, path);
      renamed = true;
      await syncDirectory(dirname(path));
      if (previous) await replaceSynced(checksum, checksumText(sha256));
      return { name, size, sha256 };
    } catch (err) {
      // A failed snapshot's data would fill the volume: periodic names are new each time.
      await rm(partial, { force: true }).catch(() => undefined);
      // The file in place is the one before this put: its checksum file goes back to what it was.
      if (replaced !== undefined && !renamed) await (replaced ? replaceSynced(checksum, replaced) : rm(checksum, { force: true })).catch(() => undefined);
      throw err;
    }
  }

  async *get(name: string): AsyncIterable<Buffer> {
    yield* verified(name, await this.openUnchecked(name));
  }

  async openUnchecked(name: string): Promise<StoredBytes> {
    const path = this.path(name);
    const sums = await readChecksum(`${path}${CHECKSUM_SUFFIX}`);
    // No sha256: a missing file is said as such (ENOENT), not as a backup without its sha256.
    if (!sums) await stat(path);
    const accepted = checksumsOf(name, sums);
    return { data: createReadStream(path, { highWaterMark: FILE_BLOCK_BYTES }) as AsyncIterable<Buffer>, accepted };
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

import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CHECKSUM_SUFFIX, measured, verified } from './storage.js';
import type { BackupStorage, StoredObject } from './storage.js';

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
    // Written aside and renamed: a reader never sees half a snapshot under the final name.
    await pipeline(Readable.from(m.data), createWriteStream(`${path}.partial`));
    await rename(`${path}.partial`, path);
    const { size, sha256 } = m.result();
    await writeFile(`${path}${CHECKSUM_SUFFIX}`, `${sha256}\n`);
    return { name, size, sha256 };
  }

  async *get(name: string): AsyncIterable<Buffer> {
    const path = this.path(name);
    const expected = await readFile(`${path}${CHECKSUM_SUFFIX}`, 'utf8').catch(() => '');
    yield* verified(name, createReadStream(path) as AsyncIterable<Buffer>, expected);
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

/** `etcd-operator snapshot fetch`: the step of a restore that brings a verified snapshot into a member's volume. */
import { createWriteStream } from 'node:fs';
import { readFile, rename, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { DirectoryStorage } from '../storage/directory.js';
import { s3Storage } from '../storage/locate.js';
import type { BackupStorage } from '../storage/storage.js';

export const SNAPSHOT_USAGE = `usage: etcd-operator snapshot fetch --to FILE (--s3-path BUCKET/KEY --aws-dir DIR [--s3-endpoint URL] [--force-path-style] | --dir DIR --name PATH)
  Copies a backup to FILE, checking it against the sha256 stored beside it; nothing is left at FILE if it does not match.`;

const say = (msg: string, fields: Record<string, unknown> = {}): void => {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), component: 'snapshot-fetch', msg, ...fields })}\n`);
};

export async function snapshotCommand(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv, allowPositionals: true, options: {
      to: { type: 'string' }, 's3-path': { type: 'string' }, 's3-endpoint': { type: 'string' }, 'force-path-style': { type: 'boolean', default: false },
      'aws-dir': { type: 'string' }, dir: { type: 'string' }, name: { type: 'string' },
    },
  });
  if (positionals[0] !== 'fetch' || !values.to || !(values['s3-path'] ? values['aws-dir'] : values.dir && values.name)) {
    process.stderr.write(`${SNAPSHOT_USAGE}\n`);
    return 2;
  }
  let storage: BackupStorage;
  let name: string;
  if (values['s3-path']) {
    const dir = values['aws-dir'] ?? '';
    const located = s3Storage({ path: values['s3-path'], ...(values['s3-endpoint'] ? { endpoint: values['s3-endpoint'] } : {}), forcePathStyle: values['force-path-style'] },
      await readFile(`${dir}/credentials`, 'utf8'), await readFile(`${dir}/config`, 'utf8').catch(() => ''));
    ({ storage, name } = located);
  } else {
    storage = new DirectoryStorage(values.dir ?? '');
    name = values.name ?? '';
  }
  const partial = `${values.to}.partial`;
  const started = Date.now();
  try {
    await pipeline(Readable.from(storage.get(name)), createWriteStream(partial));
    await rename(partial, values.to);
    say('snapshot fetched and verified', { name, to: values.to, ms: Date.now() - started });
    return 0;
  } catch (err) {
    await rm(partial, { force: true });
    say('snapshot not fetched', { name, error: (err as Error).message });
    return 1;
  }
}

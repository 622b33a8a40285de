import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { eventually, lab, labTool } from './lab.js';
import { freePort } from './free-port.js';
import { owned, stopChild } from './child-stop.js';

export interface Minio {
  /** Reachable from the host and from pods (the lab bridge address). */
  endpoint: string;
  accessKey: string;
  secretKey: string;
  client: S3Client;
  /** The server's process, for measuring what it uses. */
  pid: number;
  /** The CoreOS awsSecret files for these credentials. */
  awsSecretData: Record<string, string>;
}

/** Anything that runs cleanups at its end: a test's context, or a benchmark's. */
export interface Cleanups { after(fn: () => unknown): void }

/**
 * A real MinIO server on the lab bridge, with one bucket; stopped (by its PID) and its data removed when the
 * test ends. `serverArgs` go to `minio server` after the usual ones (the bench's `--no-compat`).
 */
export async function startMinio(t: Cleanups, bucket: string, serverArgs: string[] = []): Promise<Minio> {
  const dir = mkdtempSync(join(tmpdir(), 'minio-'));
  const port = await freePort(lab().hostIP);
  const consolePort = await freePort();
  const accessKey = 'labaccess';
  const secretKey = 'labsecret-0123456789';
  const logs: string[] = [];
  const child = owned(spawn(await labTool('minio'), ['server', dir, '--address', `${lab().hostIP}:${port}`, '--console-address', `127.0.0.1:${consolePort}`, '--quiet', ...serverArgs], {
    env: { ...process.env, MINIO_ROOT_USER: accessKey, MINIO_ROOT_PASSWORD: secretKey, MINIO_BROWSER: 'off' }, stdio: ['ignore', 'pipe', 'pipe'],
  }));
  child.stdout.on('data', (c: Buffer) => logs.push(c.toString()));
  child.stderr.on('data', (c: Buffer) => logs.push(c.toString()));
  const endpoint = `http://${lab().hostIP}:${port}`;
  const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { accessKeyId: accessKey, secretAccessKey: secretKey } });
  t.after(async () => {
    client.destroy();
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  });
  await eventually(`MinIO live (${logs.join('').slice(-200)})`, 30_000, async () => ((await fetch(`${endpoint}/minio/health/live`)).ok ? true : undefined));
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    endpoint, accessKey, secretKey, client, pid: child.pid ?? 0,
    awsSecretData: {
      credentials: `[default]\naws_access_key_id = ${accessKey}\naws_secret_access_key = ${secretKey}\n`,
      config: '[default]\nregion = us-east-1\n',
    },
  };
}

/** Every key under `prefix` as the store holds it (objects and their sha256 alike, whatever S3Storage lists), in order. */
export async function storedKeys(minio: Minio, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await minio.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    keys.push(...(page.Contents ?? []).flatMap((o) => (o.Key ? [o.Key] : [])));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys.sort();
}

import type { V1Secret } from '@kubernetes/client-node';
import { ApiError } from '../../runtime/transport.js';
import type { ApiTransport } from '../../runtime/transport.js';
import type { BackupStorage } from '../../storage/storage.js';
import { s3Storage } from '../../storage/locate.js';
import { secretText } from '../../k8s/tls-secrets.js';
import type { BackupSpec, S3Location } from '../../api/etcd-backup.js';
import { SealError } from '../../storage/sealed.js';
import type { KeyRing, SealOptions } from '../../storage/sealed.js';
import { keyRing, sealWith } from '../../storage/keys.js';
import { ConfigurationError } from '../cluster/tls.js';

export interface OpenedStorage {
  storage: BackupStorage;
  /** The object name inside the store that the spec's path stands for. */
  name: string;
  close(): void;
}

/**
 * The S3 storage a backup or restore names, with the credentials from its Secret. (A volume is only ever
 * read or written by pods that mount it, never by the operator process.)
 */
export async function openStorage(transport: ApiTransport, namespace: string, s3: S3Location | undefined): Promise<OpenedStorage> {
  if (!s3) throw new ConfigurationError('S3Missing', 'storageType S3 needs s3');
  const secret = await readSecret(transport, namespace, s3.awsSecret);
  let located;
  try {
    located = s3Storage(s3, secretText(secret, 'credentials') ?? '', secretText(secret, 'config') ?? '');
  } catch (err) {
    throw new ConfigurationError('InvalidAwsSecret', `Secret ${s3.awsSecret}: ${(err as Error).message}`);
  }
  const { storage, name } = located;
  return { storage, name, close: () => { storage.destroy(); } };
}

async function readSecret(transport: ApiTransport, namespace: string, name: string): Promise<V1Secret> {
  try {
    return (await transport.call('GET', `/api/v1/namespaces/${namespace}/secrets/${name}`)) as V1Secret;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) throw new ConfigurationError('SecretMissing', `Secret ${name} does not exist`);
    throw err;
  }
}

/** The keys in a backup key Secret (each entry a key, named by its id); a bad one is a configuration error. */
export async function readKeyRing(transport: ApiTransport, namespace: string, secretName: string): Promise<KeyRing> {
  const secret = await readSecret(transport, namespace, secretName);
  return configured('InvalidKeySecret', `Secret ${secretName}`, () => keyRing(Object.entries(secret.data ?? {}).map(([id, b64]) => [id, Buffer.from(b64, 'base64')] as const)));
}

/** How a backup's objects are sealed, its key read from its Secret now (a key missing there is a configuration error). */
export async function backupSealing(transport: ApiTransport, namespace: string, spec: BackupSpec): Promise<SealOptions> {
  const ring = spec.encryption ? await readKeyRing(transport, namespace, spec.encryption.keySecret) : undefined;
  return configured('KeyMissing', `Secret ${spec.encryption?.keySecret ?? ''}`, () => sealWith(spec.compression ?? 'None', ring, spec.encryption?.keyId));
}

function configured<T>(reason: string, where: string, make: () => T): T {
  try {
    return make();
  } catch (err) {
    if (err instanceof SealError) throw new ConfigurationError(reason, `${where}: ${err.message}`);
    throw err;
  }
}

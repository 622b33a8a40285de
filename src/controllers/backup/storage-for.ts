import type { V1Secret } from '@kubernetes/client-node';
import { ApiError } from '../../runtime/transport.js';
import type { ApiTransport } from '../../runtime/transport.js';
import type { BackupStorage } from '../../storage/storage.js';
import { s3Storage } from '../../storage/locate.js';
import { secretText } from '../../k8s/tls-secrets.js';
import type { S3Location, VolumeLocation } from '../../api/etcd-backup.js';
import { ConfigurationError } from '../cluster/tls.js';

export interface OpenedStorage {
  storage: BackupStorage;
  /** The object name inside the store that the spec's path stands for. */
  name: string;
  close(): void;
}

/** The storage a backup or restore names, with the credentials from its Secret. */
export async function openStorage(
  transport: ApiTransport, namespace: string, type: 'S3' | 'Volume', s3?: S3Location, volume?: VolumeLocation,
): Promise<OpenedStorage> {
  if (type === 'Volume' || !s3) {
    // A volume is mounted into a pod; the operator process has none of the claims mounted.
    throw new ConfigurationError('VolumeNotSupported', `storage on volume ${volume?.claimName ?? ''} is not supported by this operator version yet; use S3`);
  }
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

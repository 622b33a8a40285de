import type { V1Secret } from '@kubernetes/client-node';
import { ApiError } from '../../runtime/transport.js';
import type { ApiTransport } from '../../runtime/transport.js';
import { S3Storage } from '../../storage/s3.js';
import type { BackupStorage } from '../../storage/storage.js';
import { awsProfile } from '../../storage/aws-files.js';
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
  const slash = s3.path.indexOf('/');
  const bucket = s3.path.slice(0, slash);
  const secret = await readSecret(transport, namespace, s3.awsSecret);
  let profile;
  try {
    profile = awsProfile(secretText(secret, 'credentials') ?? '', secretText(secret, 'config') ?? '');
  } catch (err) {
    throw new ConfigurationError('InvalidAwsSecret', `Secret ${s3.awsSecret}: ${(err as Error).message}`);
  }
  const storage = new S3Storage({ bucket, ...(s3.endpoint ? { endpoint: s3.endpoint } : {}), forcePathStyle: s3.forcePathStyle ?? false, ...profile });
  return { storage, name: s3.path.slice(slash + 1), close: () => { storage.destroy(); } };
}

async function readSecret(transport: ApiTransport, namespace: string, name: string): Promise<V1Secret> {
  try {
    return (await transport.call('GET', `/api/v1/namespaces/${namespace}/secrets/${name}`)) as V1Secret;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) throw new ConfigurationError('SecretMissing', `Secret ${name} does not exist`);
    throw err;
  }
}

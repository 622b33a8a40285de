import { randomBytes } from 'node:crypto';
import type { V1EnvVar, V1Pod } from '@kubernetes/client-node';
import type { BackupSpec, VolumeLocation } from '../api/etcd-backup.js';
import type { Codec } from '../storage/sealed.js';
import { APP } from './labels.js';
import { ownedBy } from './owner.js';
import { OPERATOR_UID, lockedDownContainer, nonRootPod } from './security.js';
import { tiersArg } from '../storage/retention.js';
import type { Retention } from '../storage/retention.js';

export interface SnapshotPodInput {
  namespace: string;
  backup: string;
  backupUid: string;
  operatorImage: string;
  endpoints: string[];
  volume: VolumeLocation;
  /** A Secret with the client certificate (etcd-client.crt, etcd-client.key, etcd-client-ca.crt). */
  tlsSecret?: string;
  periodic: boolean;
  retention: Retention;
  compression: Codec;
  /** The Secret with the backup keys, mounted at KEY_DIR, and the key new backups are sealed with. */
  encryption?: NonNullable<BackupSpec['encryption']>;
  timeoutSeconds: number;
}

export const TLS_DIR = '/etc/etcd-client-tls';
export const KEY_DIR = '/etc/etcd-backup/keys';

/**
 * The pods that run the image's entrypoint to stream a snapshot (a restore's fetch step, a Volume backup's pod)
 * give Node a young generation of at most 3 × 1 MiB, through the environment (wherever the image puts node).
 * Their streams make a 64 KiB buffer per network read, garbage at once: collected that soon, the same memory
 * serves the next reads while it is still in the cache. A 1.2 GB fetch from a local MinIO on the host, 4 runs each
 * taken in turns (2026-11-29): 2.7–2.9 s with Node's defaults (up to 3 × 16 MiB), 2.9–3.1 s at 2 MiB, 2.1–2.3 s
 * at 1 MiB.
 */
export const streamNodeEnv = (): V1EnvVar => ({ name: 'NODE_OPTIONS', value: '--max-semi-space-size=1' });

/**
 * A one-off pod that takes a backup onto a volume: the operator image runs the same snapshot code with the
 * claim mounted, and leaves its result (object, size, sha256, revision) as the container's termination message.
 */
export function snapshotPod(i: SnapshotPodInput): V1Pod {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      name: `${i.backup}-snapshot-${randomBytes(4).toString('hex')}`, namespace: i.namespace,
      labels: { app: APP, etcd_backup: i.backup }, ownerReferences: [ownedBy('EtcdBackup', i.backup, i.backupUid)],
    },
    spec: {
      restartPolicy: 'Never', activeDeadlineSeconds: i.timeoutSeconds, enableServiceLinks: false, automountServiceAccountToken: false,
      // fsGroup: the volume plugin makes the claim writable by the pod's non-root user.
      securityContext: { ...nonRootPod, fsGroup: OPERATOR_UID },
      containers: [{
        name: 'snapshot', image: i.operatorImage, terminationMessagePolicy: 'File', securityContext: lockedDownContainer, env: [streamNodeEnv()],
        // The operator image's entrypoint is the CLI, wherever an image puts node.
        args: [
          'snapshot', 'save', '--endpoints', i.endpoints.join(','), '--dir', '/backup', '--name', i.volume.path,
          '--timeout', String(i.timeoutSeconds), ...(i.periodic ? ['--periodic', '--max-backups', String(i.retention.maxBackups)] : []),
          ...(i.periodic && i.retention.tiers.length > 0 ? ['--retention', tiersArg(i.retention.tiers)] : []),
          ...(i.tlsSecret ? ['--tls-dir', TLS_DIR] : []), '--compression', i.compression,
          ...(i.encryption ? ['--key-dir', KEY_DIR, '--key-id', i.encryption.keyId] : []),
        ],
        volumeMounts: [
          { name: 'backup', mountPath: '/backup' }, ...(i.tlsSecret ? [{ name: 'tls', mountPath: TLS_DIR, readOnly: true }] : []),
          ...(i.encryption ? [{ name: 'keys', mountPath: KEY_DIR, readOnly: true }] : []),
        ],
      }],
      volumes: [
        { name: 'backup', persistentVolumeClaim: { claimName: i.volume.claimName } },
        ...(i.tlsSecret ? [{ name: 'tls', secret: { secretName: i.tlsSecret } }] : []),
        ...(i.encryption ? [{ name: 'keys', secret: { secretName: i.encryption.keySecret } }] : []),
      ],
    },
  };
}

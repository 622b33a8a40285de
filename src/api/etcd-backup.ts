import type { V1OwnerReference } from '@kubernetes/client-node';
import { array, boolean, integer, object, oneOf, string } from './schema.js';
import type { Infer } from './schema.js';
import { CODECS } from '../storage/sealed.js';
import { CLUSTER_NAME, GROUP, VERSION, clusterSpec, condition } from './etcd-cluster.js';

const dnsName = (description: string) => string({ description, maxLength: 253, pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$' });

/** No ".." or "." segment, no leading "/": a backup path stays inside its bucket or volume. */
const CONFINED_PATH = [{ rule: "!self.startsWith('/') && !self.matches('(^|/)[.][.]?(/|$)')", message: 'a path may not start with "/" or contain "." or ".." segments' }];

export const s3Location = object({
  path: string({
    description: 'Where the snapshot goes: "<bucket>/<key>" (CoreOS). Periodic backups append "_v<revision>_<time>" to the key.',
    pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/.+$', maxLength: 1024, 'x-kubernetes-validations': CONFINED_PATH,
  }),
  awsSecret: dnsName('Secret with "credentials" and "config" in the AWS shared-file format (CoreOS).'),
  endpoint: string({ description: 'An S3-compatible endpoint URL (for services other than AWS).', pattern: '^https?://', maxLength: 512 }),
  forcePathStyle: boolean({ description: 'Address buckets as <endpoint>/<bucket> rather than <bucket>.<endpoint>.' }),
}, { required: ['path', 'awsSecret'] });

export const volumeLocation = object({
  claimName: dnsName('A PersistentVolumeClaim in the same namespace.'),
  path: string({ description: 'A file path inside the volume.', maxLength: 1024, pattern: '^[A-Za-z0-9._/-]+$', 'x-kubernetes-validations': CONFINED_PATH }),
}, { required: ['claimName', 'path'] });

/**
 * etcd's own advice for a restored store that Kubernetes uses: far past any revision written since the snapshot, so
 * that no resourceVersion a client holds is reused for other data.
 */
export const DEFAULT_REVISION_BUMP = 1_000_000_000;
/** The bump a restore asks for: its spec's, or the default for one stored before the field existed. */
export const revisionBumpOf = (spec: { revisionBump?: number | undefined }): number => spec.revisionBump ?? DEFAULT_REVISION_BUMP;
/** Room for millions of restores within etcd's int64 revisions. */
const MAX_REVISION_BUMP = 1_000_000_000_000;

const KEY_ID = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';
const keySecret = dnsName('A Secret holding the backup keys: each data entry is one key, its name the key id, its value 32 random bytes '
  + '(kubectl create secret generic NAME --from-file=KEYID=<(head -c 32 /dev/urandom)).');

const backupEncryption = object({
  keySecret,
  keyId: string({
    description: 'The key new backups are sealed with (AES-256-GCM). Each object records its key id, so after a rotation older backups still open '
      + 'as long as keySecret keeps their key.', pattern: KEY_ID,
  }),
}, { required: ['keySecret', 'keyId'], description: 'Client-side authenticated encryption of the backups.' });

const STORAGE_RULES = [
  { rule: "self.storageType != 'S3' || has(self.s3)", message: 'storageType S3 needs s3' },
  { rule: "self.storageType != 'Volume' || has(self.volume)", message: 'storageType Volume needs volume' },
];

export const backupSpec = object({
  etcdEndpoints: array(string({ pattern: '^https?://', maxLength: 512 }), { description: 'Client URLs of an etcd cluster (CoreOS).', maxItems: 16 }),
  clusterName: dnsName('An EtcdCluster in the same namespace: its members, and its TLS client certificate.'),
  clientTLSSecret: dnsName('For etcdEndpoints over TLS: a Secret with etcd-client.crt, etcd-client.key and etcd-client-ca.crt (CoreOS).'),
  storageType: oneOf(['S3', 'Volume'], { description: 'S3 (any S3-compatible service) or Volume (a PVC).' }),
  s3: s3Location,
  volume: volumeLocation,
  compression: oneOf(CODECS, {
    description: 'None (default: the object is a plain etcd snapshot, as CoreOS wrote it), Brotli (measured the best ratio and speed on etcd data) or Gzip.',
  }),
  encryption: backupEncryption,
  continuous: object({
    chunkSeconds: integer({ description: 'A chunk of the change log is stored this often (default 5): the RPO under steady writes is about this.', minimum: 1, maximum: 300 }),
    chunkMiB: integer({ description: 'Or sooner, once this much has changed (default 4).', minimum: 1, maximum: 64 }),
  }, {
    description: 'Continuous backup: besides the periodic full snapshots, every revision after them is kept in a change log beside them '
      + '(<path>.changes/), so a restore can reach any revision (EtcdRestore.spec.pointInTime). Needs S3 and backupIntervalInSecond.',
  }),
  verification: object({
    intervalInSecond: integer({ description: 'How often the newest backup is restored into a disposable one-member cluster and compared with the live one.', minimum: 60, maximum: 31536000 }),
    timeoutInSecond: integer({ description: 'A verification not through in this long fails (default 900).', minimum: 60, maximum: 86400 }),
  }, {
    required: ['intervalInSecond'],
    description: 'Proves the backups restore: the newest is restored into <name>-verify (deleted after), and its HashKV (or its key count and '
      + 'content digest) is compared with the live cluster\'s at the same revision; a continuous backup is restored to the newest revision its '
      + 'change log holds (its newest snapshot and the log replayed on it). status.verification records the result and the restore\'s duration (the RTO).',
  }),
  backupPolicy: object({
    timeoutInSecond: integer({ description: 'Give up a backup after this long.', minimum: 1, maximum: 86400 }),
    backupIntervalInSecond: integer({ description: 'Back up periodically, this often; once when 0 or unset.', minimum: 0, maximum: 31536000 }),
    maxBackups: integer({ description: 'Periodic backups kept (the newest); all when 0 or unset.', minimum: 0, maximum: 10000 }),
    retention: array(object({
      everySeconds: integer({ description: 'The length of a period: the newest backup of each is kept.', minimum: 60, maximum: 31536000 }),
      forSeconds: integer({ description: 'For how long such backups are kept.', minimum: 60, maximum: 315360000 }),
    }, {
      required: ['everySeconds', 'forSeconds'],
      'x-kubernetes-validations': [{ rule: 'self.forSeconds >= self.everySeconds', message: 'forSeconds must be at least everySeconds' }],
    }), {
      description: 'Tiered retention of periodic backups, e.g. every hour for a day and every day for a month: a backup is kept while a tier keeps it '
        + '(the newest always is). With maxBackups too, both apply.',
      maxItems: 8,
    }),
  }),
}, {
  required: ['storageType'],
  'x-kubernetes-validations': [
    { rule: 'has(self.etcdEndpoints) != has(self.clusterName)', message: 'name either clusterName or etcdEndpoints' },
    ...STORAGE_RULES,
    { rule: "!has(self.continuous) || self.storageType == 'S3'", message: 'continuous backup is kept in S3 (storageType S3)' },
    {
      rule: '!has(self.continuous) || (has(self.backupPolicy) && has(self.backupPolicy.backupIntervalInSecond) && self.backupPolicy.backupIntervalInSecond > 0)',
      message: 'continuous backup needs periodic full snapshots (backupPolicy.backupIntervalInSecond > 0): the change log starts from them',
    },
  ],
});

export const backupStatus = object({
  succeeded: boolean({ description: 'The last backup succeeded (CoreOS).' }),
  reason: string({ description: 'Why the last backup failed (CoreOS).' }),
  etcdVersion: string({ description: 'Version of the member the last snapshot came from (CoreOS).' }),
  etcdRevision: integer({ description: 'Store revision of the last snapshot (CoreOS).', format: 'int64' }),
  lastSuccessDate: string({ format: 'date-time' }),
  lastBackup: object({
    path: string(), size: integer({ format: 'int64' }), sha256: string({ description: 'Of the object as stored.' }),
    compression: string(), keyId: string({ description: 'The key it is encrypted with, if it is.' }),
  }),
  backups: integer({ description: 'Periodic backups kept.' }),
  inProgress: object({
    object: string(), member: string({ description: 'The member the snapshot streams from.' }), startedAt: string({ format: 'date-time' }),
    receivedBytes: integer({ format: 'int64', description: 'How much of the snapshot has come so far.' }),
    lastReceivedAt: string({ format: 'date-time', description: 'When that count last grew: a stream that stops moving fails after 30 s without a byte.' }),
  }, { description: 'A snapshot to S3 under way, brought up to date every few seconds while bytes arrive; gone when it ends.' }),
  changeLog: object({
    fromRevision: integer({ format: 'int64', description: 'The first revision of the change log\'s latest unbroken stretch.' }),
    throughRevision: integer({ format: 'int64', description: 'Every revision up to this one is stored.' }),
    confirmedAt: string({ format: 'date-time', description: 'When etcd confirmed that nothing up to throughRevision was left out.' }),
    rpoSeconds: integer({ description: 'Seconds from confirmedAt to when this status was written (rounded up): what a disaster then would have lost at most.' }),
    gaps: array(object({ from: integer({ format: 'int64' }), to: integer({ format: 'int64' }), detectedAt: string({ format: 'date-time' }) }), {
      description: 'Revisions etcd compacted before the log stored them (the latest 10): no point in time among them can be restored.', maxItems: 10,
    }),
  }),
  verification: object({
    lastVerifiedRevision: integer({ format: 'int64', description: 'The revision of the newest backup proven to restore to the live cluster\'s data.' }),
    lastVerifiedAt: string({ format: 'date-time' }),
    object: string({ description: 'The backup that was verified (a continuous backup\'s: its newest snapshot, with the change log replayed on it up to lastVerifiedRevision).' }),
    method: string({ description: 'HashKV, or ContentDigest (key count and a sha256 of every key, value and revision) when the two stores were compacted differently or the change log was replayed.' }),
    restoreSeconds: integer({ description: 'From the restore\'s start to its cluster serving the data: the measured recovery time.' }),
    lastAttemptAt: string({ format: 'date-time' }),
    running: object({
      restore: string(), object: string(), startedAt: string({ format: 'date-time' }),
      revision: integer({ format: 'int64', description: 'A continuous backup\'s: the point in time restored (the change log\'s newest revision when it started).' }),
    }, { description: 'A verification under way.' }),
  }),
  observedGeneration: integer({ format: 'int64' }),
  conditions: array(condition),
});

export const restoreSpec = object({
  etcdCluster: object({
    name: string({
      description: 'The EtcdCluster to create from the snapshot; it must not exist yet.', maxLength: CLUSTER_NAME.maxLength, pattern: CLUSTER_NAME.pattern,
    }),
  }, { required: ['name'] }),
  backupStorageType: oneOf(['S3', 'Volume']),
  s3: s3Location,
  volume: volumeLocation,
  clusterSpec: { ...clusterSpec, openapi: { ...clusterSpec.openapi, description: 'Spec of the restored cluster (default: 3 members of the default version).' } },
  encryption: object({ keySecret }, { required: ['keySecret'], description: 'The keys an encrypted backup opens with (it names its own).' }),
  pointInTime: object({
    revision: integer({ format: 'int64', minimum: 1, description: 'Restore the store exactly as it was at this revision.' }),
    time: string({ format: 'date-time', description: 'Or as it was at this time: the newest revision etcd had certainly committed by then, pinned by the '
      + 'change log\'s readings of the cluster\'s revision; refused when no readings 10 s apart or closer surround it.' }),
  }, {
    description: 'Restore to a point in time from a continuous backup: s3.path names the EtcdBackup\'s path (not one snapshot); the newest full '
      + 'snapshot at or before the point is restored and its change log replayed up to it.',
    'x-kubernetes-validations': [{ rule: 'has(self.revision) != has(self.time)', message: 'name either revision or time' }],
  }),
  revisionBump: integer({
    format: 'int64', minimum: 0, maximum: MAX_REVISION_BUMP, default: DEFAULT_REVISION_BUMP,
    description: 'Raise the restored store\'s revision this far above the snapshot\'s and mark it compacted (etcdutl\'s --bump-revision '
      + '--mark-compacted), so that clients holding revisions of the source newer than the restored point (Kubernetes\' informers and watch '
      + 'caches: resourceVersions) are told their history is gone and list again, instead of missing or misreading writes. Keys from the '
      + 'snapshot keep their revisions; a revision r of the source replayed after it is r + revisionBump in the restored store. 0 keeps the '
      + 'source\'s revision numbers (for tools that compare them, never with a Kubernetes client). Needs etcd 3.5.10 or later.',
    'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'revisionBump cannot change once the restore is made' }],
  }),
}, {
  required: ['etcdCluster', 'backupStorageType'],
  'x-kubernetes-validations': [
    ...STORAGE_RULES.map((r) => ({ ...r, rule: r.rule.replace('self.storageType', 'self.backupStorageType') })),
    { rule: "!has(self.pointInTime) || self.backupStorageType == 'S3'", message: 'a point-in-time restore reads a continuous backup, which is kept in S3' },
    {
      // etcdutl learnt --bump-revision in 3.5.10; versions before 3.5 are refused by clusterSpec's own rule.
      rule: "!has(self.revisionBump) || self.revisionBump == 0 || !has(self.clusterSpec) || !has(self.clusterSpec.version) || !self.clusterSpec.version.matches('^v?3[.]5[.][0-9]$')",
      message: 'etcdutl before 3.5.10 cannot bump the restored revision: set revisionBump: 0 (unsafe for Kubernetes clients) or restore into etcd 3.5.10 or later',
    },
  ],
});

export const restoreStatus = object({
  phase: string({ description: 'Restoring, Completed or Failed.' }),
  reason: string(),
  pointInTime: object({
    revision: integer({ format: 'int64', description: 'The revision the restored store is to be at.' }),
    snapshot: string({ description: 'The full snapshot it starts from.' }),
    snapshotRevision: integer({ format: 'int64', description: 'The revision that snapshot holds, as its <name>.held object says; else the one it is named by (the lowest it may hold).' }),
    replayedThrough: integer({ format: 'int64', description: 'The restored store holds every revision of the source up to this one.' }),
    snapshotHeld: integer({
      format: 'int64', description: 'With a revision bump: the source\'s revision the snapshot held (at or past the one it is named by); the source\'s '
        + 'revisions after it are revisionBump higher in the restored store.',
    }),
    revisionBump: integer({
      format: 'int64', description: 'How much higher the source\'s revisions replayed after the snapshot are in the restored store, found in the store '
        + 'itself: the spec\'s bump; one less from a snapshot of an empty store (etcdutl raises its newest revision with a key, there none); 0 for a '
        + 'store made before restores bumped, whatever the spec now says.',
    }),
  }),
  observedGeneration: integer({ format: 'int64' }),
  conditions: array(condition),
});

export type BackupSpec = Infer<typeof backupSpec>;
export type BackupStatus = Infer<typeof backupStatus>;
export type RestoreSpec = Infer<typeof restoreSpec>;
export type RestoreStatus = Infer<typeof restoreStatus>;
export type S3Location = Infer<typeof s3Location>;
export type VolumeLocation = Infer<typeof volumeLocation>;

interface Meta {
  name: string; namespace: string; uid?: string; generation?: number; resourceVersion?: string; deletionTimestamp?: string; creationTimestamp?: string;
  ownerReferences?: V1OwnerReference[]; annotations?: Record<string, string>;
}

export interface EtcdBackup {
  apiVersion: `${typeof GROUP}/${typeof VERSION}`;
  kind: 'EtcdBackup';
  metadata: Meta;
  spec: BackupSpec;
  status?: BackupStatus;
}

export interface EtcdRestore {
  apiVersion: `${typeof GROUP}/${typeof VERSION}`;
  kind: 'EtcdRestore';
  metadata: Meta;
  spec: RestoreSpec;
  status?: RestoreStatus;
}

/** An EtcdRestore's path on the API server. */
export const restorePath = (namespace: string, name: string): string => `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/etcdrestores/${name}`;

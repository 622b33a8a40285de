import { rfc3339 } from '../../runtime/time.js';
import { GROUP, VERSION } from '../../api/etcd-cluster.js';
import type { BackupStatus, EtcdBackup } from '../../api/etcd-backup.js';

export const backupPath = (b: EtcdBackup): string => `/apis/${GROUP}/${VERSION}/namespaces/${b.metadata.namespace}/etcdbackups/${b.metadata.name}`;

type Condition = NonNullable<BackupStatus['conditions']>[number];

/** The conditions with `c` set (its transition time kept when its status and reason did not change). */
export function withCondition(conditions: readonly Condition[] | undefined, c: Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>, generation: number | undefined): Condition[] {
  const before = conditions?.find((x) => x.type === c.type);
  const same = before?.status === c.status && before.reason === c.reason;
  const next = { ...c, lastTransitionTime: same ? before.lastTransitionTime : rfc3339(Date.now()), observedGeneration: generation };
  return [...(conditions ?? []).filter((x) => x.type !== c.type), next];
}

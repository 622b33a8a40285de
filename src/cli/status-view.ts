import type { EtcdCluster } from '../api/etcd-cluster.js';
import type { EtcdBackup } from '../api/etcd-backup.js';
import { age, bytes, table } from './table.js';

const backupsOf = (cluster: EtcdCluster, backups: EtcdBackup[]): EtcdBackup[] =>
  backups.filter((b) => b.metadata.namespace === cluster.metadata.namespace && b.spec.clusterName === cluster.metadata.name);

/** The newest successful backup of a cluster (EtcdBackups naming it by clusterName). */
export function lastBackup(cluster: EtcdCluster, backups: EtcdBackup[]): EtcdBackup | undefined {
  return backupsOf(cluster, backups).filter((b) => b.status?.lastSuccessDate)
    .sort((a, b) => Date.parse(b.status?.lastSuccessDate ?? '') - Date.parse(a.status?.lastSuccessDate ?? ''))[0];
}

/** What a continuous backup's change log holds and how fresh it is, and what the last verification proved. */
function backupLines(b: EtcdBackup, now: number): string[] {
  const s = b.status;
  const log = s?.changeLog;
  const gaps = log?.gaps?.length ? `; gaps: ${log.gaps.map((g) => `${g.from ?? '?'}-${g.to ?? '?'}`).join(', ')}` : '';
  const verified = s?.conditions?.find((c) => c.type === 'Verified');
  const proof = s?.verification;
  return [
    ...(b.spec.continuous ? [`Change log (${b.metadata.name}): ${log?.throughRevision === undefined ? 'not started'
      : `every revision through ${log.throughRevision}, confirmed ${age(log.confirmedAt, now)} ago${gaps}`}`] : []),
    ...(proof?.lastVerifiedAt ? [`Verified (${b.metadata.name}): revision ${proof.lastVerifiedRevision ?? '?'}, ${age(proof.lastVerifiedAt, now)} ago, restored in ${proof.restoreSeconds ?? '?'} s`] : []),
    ...(verified && verified.status !== 'True' ? [`Verification (${b.metadata.name}): ${verified.reason ?? ''}: ${verified.message ?? ''}`] : []),
  ];
}

const backupCell = (b: EtcdBackup | undefined, now: number): string =>
  (b ? `${b.metadata.name}, rev ${b.status?.etcdRevision ?? '?'}, ${age(b.status?.lastSuccessDate, now)} ago` : 'none');

/** One line per cluster. */
export function clustersTable(clusters: EtcdCluster[], backups: EtcdBackup[], now: number): string {
  if (clusters.length === 0) return 'No EtcdClusters found.';
  return table(['NAMESPACE', 'NAME', 'SIZE', 'READY', 'VERSION', 'PHASE', 'LEADER', 'LAST BACKUP', 'AGE'], clusters.map((c) => [
    c.metadata.namespace, c.metadata.name, String(c.spec.size), `${c.status?.readyMembers ?? 0}/${c.spec.size}`,
    c.status?.currentVersion ?? '', c.status?.phase ?? '', c.status?.leader ?? '', backupCell(lastBackup(c, backups), now),
    age(c.metadata.creationTimestamp, now),
  ]));
}

/** One cluster in full: its state, conditions, members and last backup. */
export function clusterDetail(c: EtcdCluster, backups: EtcdBackup[], now: number): string {
  const s = c.status ?? {};
  const version = s.targetVersion && s.targetVersion !== s.currentVersion ? `${s.currentVersion ?? '?'} → ${s.targetVersion}` : (s.currentVersion ?? '');
  const ready = new Set(s.members?.ready ?? []);
  const backup = lastBackup(c, backups);
  return [
    `EtcdCluster ${c.metadata.namespace}/${c.metadata.name}: ${s.phase ?? 'Pending'}, ${s.readyMembers ?? 0}/${c.spec.size} ready, version ${version}`,
    s.serviceName ? `Client: ${s.serviceName}.${c.metadata.namespace}.svc:${s.clientPort ?? 2379}` : '',
    '',
    'Conditions:',
    table(['TYPE', 'STATUS', 'REASON', 'MESSAGE'], (s.conditions ?? []).map((x) => [x.type, x.status, x.reason ?? '', x.message ?? ''])),
    '',
    'Members:',
    table(['NAME', 'ROLE', 'READY', 'VERSION', 'RAFT INDEX', 'DB SIZE', 'IN USE'], (s.memberStatus ?? []).map((m) => [
      m.name, m.isLeader ? 'leader' : m.isLearner ? 'learner' : 'follower', ready.has(m.name) ? 'yes' : 'no', m.version ?? '',
      String(m.raftIndex ?? ''), bytes(m.dbSize), bytes(m.dbSizeInUse),
    ])),
    ...(s.alarms?.length ? ['', `Alarms: ${s.alarms.map((a) => `${a.alarm ?? '?'} on ${a.member ?? '?'}`).join(', ')}`] : []),
    '',
    `Last backup: ${backup ? `${backupCell(backup, now)} (${backup.status?.lastBackup?.path ?? ''}, ${bytes(backup.status?.lastBackup?.size)})` : 'none'}`,
    ...backupsOf(c, backups).flatMap((b) => backupLines(b, now)),
  ].filter((line, i, all) => line !== '' || all[i - 1] !== '').join('\n');
}

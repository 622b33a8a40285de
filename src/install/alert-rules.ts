/**
 * The alert rules shipped with the operator (deploy/monitoring/etcd-operator-rules.yaml, and the chart's
 * PrometheusRule): etcd's own (its project's monitoring mixin, on this operator's labels) and the operator's.
 *
 * Every series is told apart by `namespace` and `etcd_cluster`: the operator's metrics carry them (scraped with
 * honor_labels), and a member's are given them from its metrics Service (the chart's ServiceMonitor, or the scrape
 * configuration in deploy/monitoring). The operator's own series carry `operator_namespace`, the namespace it runs
 * in, from the same scrape: several installs (one a namespace) are told apart by it, and the names it shares with
 * every controller (controller_runtime_*, workqueue_*) are its own only with it. No rule groups by `job`, whose
 * name is each Prometheus's own.
 */

export interface AlertRule {
  alert: string;
  expr: string;
  for: string;
  labels: { severity: 'warning' | 'critical' };
  annotations: { summary: string; description: string };
}

export interface RuleGroup { name: string; rules: AlertRule[] }

/** How long a condition must hold, and the thresholds that are times: the lab's test shortens them, the shipped file does not. */
export interface RuleTimings {
  /** The `for` of a rule whose production value is `seconds`. */
  holdFor(seconds: number): number;
  /** The change log's RPO above which a continuous backup alerts. */
  rpoTargetSeconds: number;
  /** Beyond twice a periodic backup's interval, how much older its newest backup may be before it is stale. */
  staleSlackSeconds: number;
  /** The window in which a leading operator must have reconciled its clusters, and each cluster been observed. */
  reconcileWindowSeconds: number;
}

export const SHIPPED_TIMINGS: RuleTimings = { holdFor: (s) => s, rpoTargetSeconds: 300, staleSlackSeconds: 600, reconcileWindowSeconds: 600 };

/** The operator's own series, of one install each: the shipped scrape job and PodMonitor label them so. */
const OPERATOR = 'operator_namespace!=""';
const INSTALL = '{{ $labels.operator_namespace }}';

const duration = (s: number): string => (s % 60 === 0 ? `${s / 60}m` : `${s}s`);

/** A member's series: one its metrics Service gave a cluster's labels (not the operator's own, nor another etcd's). */
const MEMBER = 'etcd_cluster!=""';
const BY = 'namespace, etcd_cluster';
const CLUSTER = '{{ $labels.namespace }}/{{ $labels.etcd_cluster }}';
const BACKUP = '{{ $labels.namespace }}/{{ $labels.backup }}';
/** Each member's 99th percentile of an etcd disk histogram over 5 minutes. */
const p99 = (histogram: string): string => `histogram_quantile(0.99, sum by (${BY}, pod, le) (rate(${histogram}_bucket{${MEMBER}}[5m])))`;

export function alertRules(t: RuleTimings = SHIPPED_TIMINGS): { groups: RuleGroup[] } {
  const rule = (alert: string, severity: 'warning' | 'critical', forSeconds: number, expr: string, summary: string, description: string): AlertRule =>
    ({ alert, expr, for: duration(t.holdFor(forSeconds)), labels: { severity }, annotations: { summary, description } });
  /** Passes of etcd clusters over the window, by install: failed ones (`=`) or the others (`!=`). */
  const reconciles = (error: '=' | '!='): string =>
    `sum by (operator_namespace) (increase(controller_runtime_reconcile_total{${OPERATOR}, controller="etcdcluster", result${error}"error"}[${duration(t.reconcileWindowSeconds)}]))`;
  const etcd: AlertRule[] = [
    rule('EtcdMembersDown', 'warning', 600,
      `max by (${BY}) (sum by (${BY}) (up{${MEMBER}} == bool 0) or count by (${BY}, To) (rate(etcd_network_peer_sent_failures_total{${MEMBER}}[2m]) > 0.01)) > 0`,
      'etcd cluster members are down',
      `etcd cluster ${CLUSTER}: {{ $value }} members are down (not scraped, or their peers fail to send to them).`),
    // The members the spec asks for, not only those scraped: a deleted member pod is no target at all.
    // With no member scraped at all (every pod gone), none answers: 0, not nothing.
    rule('EtcdInsufficientMembers', 'critical', 180,
      `(sum by (${BY}) (up{${MEMBER}} == bool 1) or sum by (${BY}) (etcd_operator_cluster_members_desired) * 0) < on (${BY}) `
        + `floor(max by (${BY}) (etcd_operator_cluster_members_desired or count by (${BY}) (up{${MEMBER}})) / 2 + 1)`,
      'etcd cluster has too few members answering for a quorum',
      `etcd cluster ${CLUSTER}: {{ $value }} members answer, fewer than a quorum; it serves no writes.`),
    rule('EtcdNoLeader', 'critical', 60, `etcd_server_has_leader{${MEMBER}} == 0`,
      'etcd member has no leader', `etcd cluster ${CLUSTER}: member {{ $labels.pod }} has no leader.`),
    // Per member, then the most any member saw: each change is seen by every member, and a replaced member starts its count anew.
    rule('EtcdHighNumberOfLeaderChanges', 'warning', 300, `max by (${BY}) (increase(etcd_server_leader_changes_seen_total{${MEMBER}}[15m])) >= 4`,
      'etcd cluster changes leader often', `etcd cluster ${CLUSTER}: {{ $value }} leader changes within 15 minutes; members or their disks or network are struggling.`),
    rule('EtcdHighFsyncDurations', 'warning', 600, `${p99('etcd_disk_wal_fsync_duration_seconds')} > 0.5`,
      'etcd WAL fsync is slow', `etcd cluster ${CLUSTER}: member {{ $labels.pod }}'s 99th percentile WAL fsync is {{ $value }} s.`),
    rule('EtcdHighFsyncDurations', 'critical', 600, `${p99('etcd_disk_wal_fsync_duration_seconds')} > 1`,
      'etcd WAL fsync is very slow', `etcd cluster ${CLUSTER}: member {{ $labels.pod }}'s 99th percentile WAL fsync is {{ $value }} s.`),
    rule('EtcdHighCommitDurations', 'warning', 600, `${p99('etcd_disk_backend_commit_duration_seconds')} > 0.25`,
      'etcd backend commits are slow', `etcd cluster ${CLUSTER}: member {{ $labels.pod }}'s 99th percentile backend commit is {{ $value }} s.`),
    rule('EtcdDatabaseQuotaLowSpace', 'critical', 600,
      `(last_over_time(etcd_mvcc_db_total_size_in_bytes{${MEMBER}}[5m]) / last_over_time(etcd_server_quota_backend_bytes{${MEMBER}}[5m])) * 100 > 95`,
      'etcd database is near its quota', `etcd cluster ${CLUSTER}: member {{ $labels.pod }}'s database is {{ $value | humanize }}% of its quota; at 100% etcd refuses writes (NOSPACE).`),
    rule('EtcdHighNumberOfFailedProposals', 'warning', 900, `rate(etcd_server_proposals_failed_total{${MEMBER}}[15m]) > 5`,
      'etcd proposals fail', `etcd cluster ${CLUSTER}: member {{ $labels.pod }} sees {{ $value | humanize }} failed proposals a second.`),
  ];
  const operator: AlertRule[] = [
    // One or two members have no margin by design (two voters need both): not "at risk", what was asked for.
    rule('EtcdClusterQuorumAtRisk', 'warning', 120,
      `etcd_operator_cluster_quorum_margin == 0 and on (${BY}) etcd_operator_cluster_members_desired > 2`,
      'etcd cluster is one member loss from stopping',
      `etcd cluster ${CLUSTER}: just a quorum of its voters answers; losing one more stops it.`),
    rule('EtcdClusterQuorumLost', 'critical', 60, 'etcd_operator_cluster_quorum_margin < 0',
      'etcd cluster has lost its quorum', `etcd cluster ${CLUSTER}: fewer than a quorum of its voters answer; it serves nothing.`),
    rule('EtcdClusterDegraded', 'warning', 900, 'etcd_operator_cluster_degraded == 1',
      'etcd cluster is degraded for long', `etcd cluster ${CLUSTER} is not as its spec asks; its Degraded condition says why.`),
    // Whatever the cause: still being created, restoring, or stopped; the conditions say which.
    rule('EtcdClusterNotAvailable', 'warning', 900, 'etcd_operator_cluster_available == 0',
      'etcd cluster does not serve', `etcd cluster ${CLUSTER} has not served for 15 minutes; its Available condition says why.`),
    rule('EtcdClusterAlarm', 'critical', 60, 'etcd_operator_cluster_alarms > 0',
      'etcd raised an alarm', `etcd cluster ${CLUSTER}: {{ $value }} members raise {{ $labels.alarm }}.`),
    // The operator disarms NOSPACE within seconds of recovering the space: an alarm that keeps coming back is seen here.
    rule('EtcdClusterAlarmsRecurring', 'warning', 60, 'increase(etcd_operator_cluster_alarms_disarmed_total[1h]) >= 2',
      'etcd alarms keep coming back', `etcd cluster ${CLUSTER}: {{ $labels.alarm }} raised and disarmed {{ $value | humanize }} times in an hour; for NOSPACE, its quota is too small for what clients write.`),
    // A cluster whose passes fail (its Secret gone, etcd unreachable from the operator): its other series are that old.
    // A paused cluster is passed over only when something changes.
    rule('EtcdClusterUnobserved', 'warning', 60,
      `time() - etcd_operator_cluster_observed_timestamp_seconds > ${t.reconcileWindowSeconds} unless on (${BY}) etcd_operator_cluster_phase{phase="Paused"} == 1`,
      'etcd-operator has not observed a cluster lately', `etcd cluster ${CLUSTER}: no pass of the operator completed for {{ $value | humanizeDuration }}; the operator's log and the cluster's Events say why.`),
    rule('EtcdBackupFailing', 'warning', 300, 'etcd_operator_backup_failing == 1',
      'etcd backups fail', `EtcdBackup ${BACKUP}: its last attempt failed; its Succeeded condition says why.`),
    rule('EtcdBackupStale', 'warning', 60,
      `time() - etcd_operator_backup_last_success_timestamp_seconds > on (namespace, backup) 2 * etcd_operator_backup_interval_seconds + ${t.staleSlackSeconds}`,
      'etcd backup is stale', `EtcdBackup ${BACKUP}: its newest backup is {{ $value | humanizeDuration }} old, over twice its interval.`),
    rule('EtcdBackupRPOHigh', 'warning', 60, `etcd_operator_changelog_rpo_seconds > ${t.rpoTargetSeconds}`,
      'etcd continuous backup is behind its RPO target',
      `EtcdBackup ${BACKUP}: the change log was last confirmed complete {{ $value | humanizeDuration }} ago, above the ${duration(t.rpoTargetSeconds)} target.`),
    rule('EtcdBackupVerificationFailing', 'critical', 60, 'etcd_operator_backup_verification_failing == 1',
      'etcd backup does not restore to the live data', `EtcdBackup ${BACKUP}: its newest backup, restored, did not hold the live cluster's data.`),
    // No install scraped at all, or one whose every replica is discovered but does not answer. (An install whose
    // Deployment is gone while another install is scraped is no target to miss: nothing tells its absence.)
    rule('EtcdOperatorDown', 'critical', 300, `absent(etcd_operator_leader) or max by (operator_namespace) (up{${OPERATOR}}) == 0`,
      'etcd-operator is not running', 'No etcd-operator replica answers{{ with $labels.operator_namespace }} in namespace {{ . }}{{ end }}: nothing heals, scales or backs up its etcd clusters.'),
    rule('EtcdOperatorNotLeading', 'critical', 300, `max by (operator_namespace) (etcd_operator_leader{${OPERATOR}}) == 0`,
      'no etcd-operator replica leads', `etcd-operator replicas in namespace ${INSTALL} run but none holds the lease: nothing acts on its etcd clusters.`),
    // Every cluster but a paused one is looked at within a minute at rest: a leader none of whose passes completes
    // (none ran: its workers or caches are stuck; or each one failed: its rights, the API) acts on nothing. The two
    // halves because a counter never incremented is absent, not 0: a leader whose every pass failed since it started
    // has no successful-pass series at all.
    rule('EtcdOperatorNotReconciling', 'critical', 300,
      `max by (operator_namespace) (etcd_operator_leader{${OPERATOR}}) == 1 and on (operator_namespace) (`
        + `(count by (operator_namespace) (etcd_operator_cluster_members_desired{${OPERATOR}} unless on (${BY}) etcd_operator_cluster_phase{phase="Paused"} == 1) > 0 `
        + `and on (operator_namespace) ${reconciles('!=')} == 0) `
        + `or (${reconciles('=')} > 0 unless on (operator_namespace) ${reconciles('!=')} > 0))`,
      'etcd-operator completes no pass', `The leading etcd-operator in namespace ${INSTALL} has completed no pass of an etcd cluster lately (none ran, or each one failed): its log says why.`),
  ];
  return { groups: [{ name: 'etcd', rules: etcd }, { name: 'etcd-operator', rules: operator }] };
}

/**
 * The Grafana dashboard shipped with the operator (deploy/monitoring/etcd-operator-dashboard.json, and the chart's
 * ConfigMap): one etcd cluster at a time, chosen by namespace and cluster, in rows of health, members, latency,
 * database, backups and the operator. The lab's test runs every panel's query against a Prometheus scraping the
 * lab and fails on an empty answer (test/e2e/monitoring.test.ts).
 */

export interface Target { expr: string; legendFormat: string; refId: string }
export interface Panel {
  id: number;
  type: 'row' | 'timeseries' | 'stat';
  title: string;
  description?: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type: 'prometheus'; uid: '${datasource}' };
  targets?: Target[];
  fieldConfig?: { defaults: { unit?: string; min?: number }; overrides: [] };
  collapsed?: false;
  panels?: [];
}

/** A cluster's series: the operator's for it, and its members' (given the cluster's labels when scraped). */
const CLUSTER = 'namespace="$namespace", etcd_cluster="$etcd_cluster"';
/**
 * The series of the operator install that manages the cluster (its replicas, told apart by `pod`): the names it
 * shares with every controller (controller_runtime_*, workqueue_*, process_*) are its own only with this label.
 */
const OPERATOR = 'operator_namespace="$operator_namespace"';
const p99 = (histogram: string): string =>
  `histogram_quantile(0.99, sum by (pod, le) (rate(${histogram}_bucket{${CLUSTER}}[$__rate_interval])))`;

interface PanelSpec { title: string; description: string; unit?: string; stat?: true; queries: [expr: string, legend: string][] }

const ROWS: [row: string, panels: PanelSpec[]][] = [
  ['Cluster health', [
    { title: 'Available', description: 'A quorum of voters follows one leader (1) or not (0).', stat: true, queries: [[`etcd_operator_cluster_available{${CLUSTER}}`, 'available']] },
    { title: 'Quorum margin', description: 'Voters answering minus a quorum: 0 is one loss from stopping, below 0 has stopped.', stat: true,
      queries: [[`etcd_operator_cluster_quorum_margin{${CLUSTER}}`, 'margin']] },
    { title: 'Phase', description: 'The cluster\'s status.phase.', stat: true, queries: [[`etcd_operator_cluster_phase{${CLUSTER}} == 1`, '{{phase}}']] },
    { title: 'Members with a leader', description: 'Members that know a leader (etcd_server_has_leader).', stat: true,
      queries: [[`sum(etcd_server_has_leader{${CLUSTER}})`, 'with a leader']] },
    { title: 'Leader changes', description: 'Leader changes each member saw (most of any member), and those the operator saw between its passes.',
      queries: [[`max(increase(etcd_server_leader_changes_seen_total{${CLUSTER}}[1h]))`, 'seen by etcd, last hour'],
        [`sum(increase(etcd_operator_cluster_leader_changes_total{${CLUSTER}}[1h]))`, 'seen by the operator, last hour']] },
    { title: 'Alarms', description: 'Members raising NOSPACE or CORRUPT.', queries: [[`etcd_operator_cluster_alarms{${CLUSTER}}`, '{{alarm}}']] },
  ]],
  ['Members', [
    { title: 'Members', description: 'As the spec asks, ready, voting, and learners catching up.',
      queries: [[`etcd_operator_cluster_members_desired{${CLUSTER}}`, 'desired'], [`etcd_operator_cluster_members_ready{${CLUSTER}}`, 'ready'],
        [`etcd_operator_cluster_members_voting{${CLUSTER}}`, 'voting'], [`etcd_operator_cluster_members_learners{${CLUSTER}}`, 'learners']] },
    { title: 'Members scraped', description: 'Each member\'s metrics listener answering Prometheus (1) or not (0).', queries: [[`up{${CLUSTER}}`, '{{pod}}']] },
    { title: 'etcd versions', description: 'Members by the etcd version they run: an upgrade moves them one by one.',
      queries: [[`count by (server_version) (etcd_server_version{${CLUSTER}})`, '{{server_version}}']] },
    { title: 'Roll pending', description: 'Members a roll under way (version, settings, pod template) has still to make anew.',
      queries: [[`etcd_operator_cluster_roll_members_pending{${CLUSTER}}`, 'pending']] },
    { title: 'Actions', description: 'What the operator did to the cluster, by kind, in the last hour.',
      queries: [[`sum by (action) (increase(etcd_operator_cluster_actions_total{${CLUSTER}}[1h]))`, '{{action}}']] },
    { title: 'Replacements', description: 'Members removed to be made again (failed, lost, stale) in the last hour.',
      queries: [[`sum(increase(etcd_operator_cluster_member_replacements_total{${CLUSTER}}[1h]))`, 'replaced']] },
  ]],
  ['Latency', [
    { title: 'WAL fsync p99', description: 'Over 0.5 s for 10 minutes alerts (EtcdHighFsyncDurations).', unit: 's', queries: [[p99('etcd_disk_wal_fsync_duration_seconds'), '{{pod}}']] },
    { title: 'Backend commit p99', description: 'Over 0.25 s for 10 minutes alerts (EtcdHighCommitDurations).', unit: 's',
      queries: [[p99('etcd_disk_backend_commit_duration_seconds'), '{{pod}}']] },
    { title: 'Peer round trip p99', description: 'Between members: the network under the consensus.', unit: 's',
      queries: [[p99('etcd_network_peer_round_trip_time_seconds'), '{{pod}}']] },
    { title: 'Client requests', description: 'gRPC calls handled a second, by method.', unit: 'reqps',
      queries: [[`sum by (grpc_method) (rate(grpc_server_handled_total{${CLUSTER}}[$__rate_interval]))`, '{{grpc_method}}']] },
    { title: 'Proposals', description: 'Raft proposals committed and failed a second, and pending.',
      queries: [[`max(rate(etcd_server_proposals_committed_total{${CLUSTER}}[$__rate_interval]))`, 'committed'],
        [`sum(rate(etcd_server_proposals_failed_total{${CLUSTER}}[$__rate_interval]))`, 'failed'], [`sum(etcd_server_proposals_pending{${CLUSTER}})`, 'pending']] },
  ]],
  ['Database', [
    { title: 'Database size', description: 'On disk, in use (the rest is freed by a defragmentation), and the quota at which etcd refuses writes.', unit: 'bytes',
      queries: [[`etcd_mvcc_db_total_size_in_bytes{${CLUSTER}}`, '{{pod}} on disk'], [`etcd_mvcc_db_total_size_in_use_in_bytes{${CLUSTER}}`, '{{pod}} in use'],
        [`max(etcd_server_quota_backend_bytes{${CLUSTER}})`, 'quota']] },
    { title: 'Quota used', description: 'Over 95% for 10 minutes alerts (EtcdDatabaseQuotaLowSpace).', unit: 'percent',
      queries: [[`100 * etcd_mvcc_db_total_size_in_bytes{${CLUSTER}} / etcd_server_quota_backend_bytes{${CLUSTER}}`, '{{pod}}']] },
  ]],
  ['Backups', [
    { title: 'Newest backup age', description: 'Per EtcdBackup of the namespace: what a disaster now would lose without a change log.', unit: 's',
      queries: [[`time() - etcd_operator_backup_last_success_timestamp_seconds{namespace="$namespace"}`, '{{backup}}']] },
    { title: 'Change log RPO', description: 'Continuous backups: seconds since the change log was last confirmed complete.', unit: 's',
      queries: [[`etcd_operator_changelog_rpo_seconds{namespace="$namespace"}`, '{{backup}}']] },
    { title: 'Backup size and duration', description: 'The newest backup as stored, and how long it took.',
      queries: [[`etcd_operator_backup_last_size_bytes{namespace="$namespace"}`, '{{backup}} bytes'], [`etcd_operator_backup_last_duration_seconds{namespace="$namespace"}`, '{{backup}} seconds']] },
    { title: 'Backups failing', description: 'The last attempt failed (1), or the last verification did.',
      queries: [[`etcd_operator_backup_failing{namespace="$namespace"}`, '{{backup}} backup'], [`etcd_operator_backup_verification_failing{namespace="$namespace"}`, '{{backup}} verification']] },
    { title: 'Last verified restore', description: 'Age of the newest backup proven to restore to the live data, and how long that restore took (the measured RTO).', unit: 's',
      queries: [[`time() - etcd_operator_backup_last_verified_timestamp_seconds{namespace="$namespace"}`, '{{backup}} age'],
        [`etcd_operator_backup_restore_duration_seconds{namespace="$namespace"}`, '{{backup}} restore took']] },
  ]],
  ['Operator', [
    { title: 'Leading', description: 'Each replica: leading (1) or standing by (0).', queries: [[`etcd_operator_leader{${OPERATOR}}`, '{{pod}}']] },
    { title: 'Reconciles', description: 'A second, by controller and result.', unit: 'ops',
      queries: [[`sum by (controller, result) (rate(controller_runtime_reconcile_total{${OPERATOR}}[$__rate_interval]))`, '{{controller}} {{result}}']] },
    { title: 'Reconcile p99', description: 'Time per reconcile, by controller.', unit: 's',
      queries: [[`histogram_quantile(0.99, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket{${OPERATOR}}[$__rate_interval])))`, '{{controller}}']] },
    { title: 'Work queue depth', description: 'Keys waiting for a worker.', queries: [[`workqueue_depth{${OPERATOR}}`, '{{pod}} {{name}}']] },
    { title: 'API requests', description: 'Requests to the Kubernetes API server a second, by method and code.', unit: 'reqps',
      queries: [[`sum by (method, code) (rate(rest_client_requests_total{${OPERATOR}}[$__rate_interval]))`, '{{method}} {{code}}']] },
    { title: 'Memory and CPU', description: 'Resident memory (bytes) and CPU (cores) of each replica.',
      queries: [[`process_resident_memory_bytes{${OPERATOR}}`, '{{pod}} memory'], [`rate(process_cpu_seconds_total{${OPERATOR}}[$__rate_interval])`, '{{pod}} CPU']] },
  ]],
];

const WIDTH = 24;
const PER_ROW = 3;

function panels(): Panel[] {
  const out: Panel[] = [];
  let y = 0;
  for (const [row, specs] of ROWS) {
    out.push({ id: out.length + 1, type: 'row', title: row, collapsed: false, panels: [], gridPos: { x: 0, y, w: WIDTH, h: 1 } });
    y += 1;
    specs.forEach((s, i) => {
      const w = WIDTH / PER_ROW;
      out.push({
        id: out.length + 1, type: s.stat ? 'stat' : 'timeseries', title: s.title, description: s.description,
        gridPos: { x: (i % PER_ROW) * w, y: y + Math.floor(i / PER_ROW) * 7, w, h: 7 },
        datasource: { type: 'prometheus', uid: '${datasource}' },
        fieldConfig: { defaults: s.unit ? { unit: s.unit } : {}, overrides: [] },
        targets: s.queries.map(([expr, legendFormat], q) => ({ expr, legendFormat, refId: String.fromCharCode(65 + q) })),
      });
    });
    y += Math.ceil(specs.length / PER_ROW) * 7;
  }
  return out;
}

const variable = (name: string, query: string): object => ({
  name, label: name, type: 'query', datasource: { type: 'prometheus', uid: '${datasource}' },
  query: { query, refId: name }, definition: query, refresh: 2, sort: 1, includeAll: false, multi: false,
});

export function dashboard(): object {
  return {
    title: 'etcd clusters (etcd-operator)',
    uid: 'etcd-operator-clusters',
    description: 'One etcd cluster managed by etcd-operator: health, members, latency, database, backups, and the operator.',
    tags: ['etcd', 'etcd-operator'],
    editable: true,
    schemaVersion: 39,
    time: { from: 'now-6h', to: 'now' },
    refresh: '30s',
    templating: {
      list: [
        { name: 'datasource', label: 'Prometheus', type: 'datasource', query: 'prometheus' },
        variable('namespace', 'label_values(etcd_operator_cluster_members_desired, namespace)'),
        variable('etcd_cluster', 'label_values(etcd_operator_cluster_members_desired{namespace="$namespace"}, etcd_cluster)'),
        // The install managing the chosen cluster: its leader reports the cluster. Hidden: it follows from the choice.
        { ...variable('operator_namespace', 'label_values(etcd_operator_cluster_members_desired{namespace="$namespace", etcd_cluster="$etcd_cluster"}, operator_namespace)'), hide: 2 },
      ],
    },
    panels: panels(),
  };
}

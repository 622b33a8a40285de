import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from './prometheus.js';
import type { QueueObserver } from './workqueue.js';
import type { ReconcileObserver } from './controller.js';
import { ClusterMetrics } from './cluster-metrics.js';

/** What the backup controller reports of each backup. */
export interface BackupObserver {
  taken(namespace: string, backup: string, t: { atMs: number; bytes: number; revision: number; seconds: number }): void;
  /**
   * What the EtcdBackup's status records, at every pass: a restarted operator reports the newest backup's age and a
   * failing one before it takes one. `intervalSeconds`: how often it takes one (0: once).
   */
  recorded(namespace: string, backup: string, r: { lastSuccessAtMs?: number; intervalSeconds: number; failing: boolean; verification?: 'passing' | 'failing' | 'off' }): void;
  failed(namespace: string, backup: string): void;
  /** A continuous backup's change log, as it stands. */
  changeLog(namespace: string, backup: string, s: { throughRevision?: number; confirmedAtMs?: number; gaps: readonly unknown[] }): void;
  /** A verification's verdict; a passed one with the revision proven and the restore's duration. */
  verified(namespace: string, backup: string, v: { result: 'passed'; atMs: number; revision: number; restoreSeconds?: number } | { result: 'failed' | 'inconclusive' }): void;
  gone(namespace: string, backup: string): void;
}

/**
 * The operator's Prometheus metrics, named as controller-runtime names them so that existing dashboards
 * and alerts for Kubernetes controllers apply unchanged.
 */
export class RuntimeMetrics {
  readonly registry = new Registry();
  private readonly reconcileTotal = new Counter({
    name: 'controller_runtime_reconcile_total', help: 'Reconciles per controller and result.',
    labelNames: ['controller', 'result'], registers: [this.registry],
  });
  private readonly reconcileErrors = new Counter({
    name: 'controller_runtime_reconcile_errors_total', help: 'Reconciles that failed.',
    labelNames: ['controller'], registers: [this.registry],
  });
  private readonly reconcileTime = new Histogram({
    name: 'controller_runtime_reconcile_time_seconds', help: 'Time per reconcile.',
    labelNames: ['controller'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  private readonly depth = new Gauge({
    name: 'workqueue_depth', help: 'Keys waiting in the queue.', labelNames: ['name'], registers: [this.registry],
  });
  private readonly adds = new Counter({
    name: 'workqueue_adds_total', help: 'Keys added to the queue.', labelNames: ['name'], registers: [this.registry],
  });
  private readonly retries = new Counter({
    name: 'workqueue_retries_total', help: 'Keys re-queued after a failure.', labelNames: ['name'], registers: [this.registry],
  });
  private readonly queueDuration = new Histogram({
    name: 'workqueue_queue_duration_seconds', help: 'Time a key waited in the queue before a worker took it.',
    labelNames: ['name'], buckets: [0.001, 0.01, 0.1, 0.5, 1, 5, 10, 60], registers: [this.registry],
  });

  private readonly apiRequests = new Counter({
    name: 'rest_client_requests_total', help: 'Requests to the Kubernetes API server by method (WATCH for a watch) and status code (0: no answer); watches count once each.',
    labelNames: ['method', 'code'], registers: [this.registry],
  });

  private readonly backupLabels = ['namespace', 'backup'];
  private readonly backups = new Counter({
    name: 'etcd_operator_backups_total', help: 'Backups taken (result succeeded) or failed, per EtcdBackup.',
    labelNames: [...this.backupLabels, 'result'], registers: [this.registry],
  });
  private readonly backupSuccess = new Gauge({
    name: 'etcd_operator_backup_last_success_timestamp_seconds',
    help: 'When the newest backup of each EtcdBackup was taken; time() minus it is the data a disaster now would lose (RPO).',
    labelNames: this.backupLabels, registers: [this.registry],
  });
  private readonly backupBytes = new Gauge({
    name: 'etcd_operator_backup_last_size_bytes', help: 'Size of the newest backup as stored (compressed, encrypted).', labelNames: this.backupLabels, registers: [this.registry],
  });
  private readonly backupRevision = new Gauge({
    name: 'etcd_operator_backup_last_revision', help: 'etcd store revision the newest backup holds.', labelNames: this.backupLabels, registers: [this.registry],
  });
  private readonly backupSeconds = new Gauge({
    name: 'etcd_operator_backup_last_duration_seconds', help: 'How long the newest backup took, snapshot to stored.', labelNames: this.backupLabels, registers: [this.registry],
  });

  private readonly backupInterval = new Gauge({
    name: 'etcd_operator_backup_interval_seconds', help: 'How often a periodic EtcdBackup takes a backup (absent for a one-off): a newest backup older than twice this is stale.',
    labelNames: this.backupLabels, registers: [this.registry],
  });
  private readonly backupFailing = new Gauge({
    name: 'etcd_operator_backup_failing', help: '1 while the last backup attempt failed, 0 once one succeeds.', labelNames: this.backupLabels, registers: [this.registry],
  });

  private readonly changeLogRevision = new Gauge({
    name: 'etcd_operator_changelog_revision', help: 'Every revision up to this one is in the continuous backup\'s change log.',
    labelNames: this.backupLabels, registers: [this.registry],
  });
  private readonly changeLogConfirmed = new Gauge({
    name: 'etcd_operator_changelog_confirmed_timestamp_seconds', help: 'When etcd last confirmed that the stored change log left nothing out.',
    labelNames: this.backupLabels, registers: [this.registry],
  });
  /** Confirmation times by "namespace/backup", for the RPO worked out at each scrape. */
  private readonly confirmedAt = new Map<string, { namespace: string; backup: string; ms: number }>();
  private readonly changeLogRpo = new Gauge({
    name: 'etcd_operator_changelog_rpo_seconds',
    help: 'Seconds since the change log was last confirmed complete: at most what a disaster now would lose (the recovery point objective).',
    labelNames: this.backupLabels, registers: [this.registry],
    collect: () => {
      for (const c of this.confirmedAt.values()) this.changeLogRpo.set({ namespace: c.namespace, backup: c.backup }, (Date.now() - c.ms) / 1000);
    },
  });
  private readonly changeLogGaps = new Gauge({
    name: 'etcd_operator_changelog_gaps', help: 'Gaps found in the change log since the operator started (revisions compacted before they were stored).',
    labelNames: this.backupLabels, registers: [this.registry],
  });

  private readonly verifications = new Counter({
    name: 'etcd_operator_backup_verifications_total', help: 'Verifications of the newest backup by result (passed, failed, inconclusive).',
    labelNames: [...this.backupLabels, 'result'], registers: [this.registry],
  });
  private readonly verifiedAt = new Gauge({
    name: 'etcd_operator_backup_last_verified_timestamp_seconds', help: 'When a backup was last proven to restore to the live cluster\'s data.',
    labelNames: this.backupLabels, registers: [this.registry],
  });
  private readonly verifiedRevision = new Gauge({
    name: 'etcd_operator_backup_last_verified_revision', help: 'The revision of the backup last proven to restore.', labelNames: this.backupLabels, registers: [this.registry],
  });
  private readonly verificationFailing = new Gauge({
    name: 'etcd_operator_backup_verification_failing', help: '1 while the last verification of the newest backup failed (its restore did not hold the live data), 0 once one passes.',
    labelNames: this.backupLabels, registers: [this.registry],
  });
  private readonly restoreSeconds = new Gauge({
    name: 'etcd_operator_backup_restore_duration_seconds', help: 'How long the last verified restore took to serve the data (the measured RTO).',
    labelNames: this.backupLabels, registers: [this.registry],
  });

  private readonly leader = new Gauge({
    name: 'etcd_operator_leader', help: '1 while this process leads (holds the lease) and runs the controllers, 0 while it stands by.', registers: [this.registry],
  });

  /** Each EtcdCluster's health, as the leading process sees it. */
  readonly clusters = new ClusterMetrics(this.registry);

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.leader.set(0);
  }

  /** A term begins or ends: a process that stops leading drops what it reported of the clusters. */
  leading(yes: boolean): void {
    this.leader.set(yes ? 1 : 0);
    if (!yes) this.clusters.reset();
  }

  /** For the backup controller: each backup's outcome, and its series dropped when the EtcdBackup goes. */
  readonly backupObserver: BackupObserver = {
    taken: (namespace, backup, t) => {
      const labels = { namespace, backup };
      this.backups.inc({ ...labels, result: 'succeeded' });
      this.backupSuccess.set(labels, t.atMs / 1000);
      this.backupBytes.set(labels, t.bytes);
      this.backupRevision.set(labels, t.revision);
      this.backupSeconds.set(labels, t.seconds);
      this.backupFailing.set(labels, 0);
    },
    recorded: (namespace, backup, r) => {
      const labels = { namespace, backup };
      if (r.lastSuccessAtMs !== undefined) this.backupSuccess.set(labels, r.lastSuccessAtMs / 1000);
      if (r.intervalSeconds > 0) this.backupInterval.set(labels, r.intervalSeconds);
      else this.backupInterval.remove(labels);
      this.backupFailing.set(labels, r.failing ? 1 : 0);
      // As its status last told (a restarted operator's next verification may be a day away); untold, left as it is.
      if (r.verification === 'off') this.verificationFailing.remove(labels);
      else if (r.verification) this.verificationFailing.set(labels, r.verification === 'failing' ? 1 : 0);
    },
    failed: (namespace, backup) => {
      this.backups.inc({ namespace, backup, result: 'failed' });
      this.backupFailing.set({ namespace, backup }, 1);
    },
    changeLog: (namespace, backup, s) => {
      const labels = { namespace, backup };
      this.changeLogGaps.set(labels, s.gaps.length);
      if (s.throughRevision !== undefined) this.changeLogRevision.set(labels, s.throughRevision);
      if (s.confirmedAtMs === undefined) return;
      this.changeLogConfirmed.set(labels, s.confirmedAtMs / 1000);
      this.confirmedAt.set(`${namespace}/${backup}`, { ...labels, ms: s.confirmedAtMs });
    },
    verified: (namespace, backup, v) => {
      const labels = { namespace, backup };
      this.verifications.inc({ ...labels, result: v.result });
      // An inconclusive verification (the live cluster moved on, say) proves nothing either way.
      if (v.result === 'failed') this.verificationFailing.set(labels, 1);
      if (v.result !== 'passed') return;
      this.verificationFailing.set(labels, 0);
      this.verifiedAt.set(labels, v.atMs / 1000);
      this.verifiedRevision.set(labels, v.revision);
      if (v.restoreSeconds !== undefined) this.restoreSeconds.set(labels, v.restoreSeconds);
    },
    gone: (namespace, backup) => {
      this.confirmedAt.delete(`${namespace}/${backup}`);
      for (const result of ['passed', 'failed', 'inconclusive']) this.verifications.remove({ namespace, backup, result });
      for (const m of [this.backupSuccess, this.backupBytes, this.backupRevision, this.backupSeconds, this.backupInterval, this.backupFailing, this.verificationFailing, this.changeLogRevision, this.changeLogConfirmed, this.changeLogRpo, this.changeLogGaps,
        this.verifiedAt, this.verifiedRevision, this.restoreSeconds]) {
        m.remove({ namespace, backup });
      }
      for (const result of ['succeeded', 'failed']) this.backups.remove({ namespace, backup, result });
    },
  };

  /** For ApiTransport: counts each request to the API server. */
  readonly apiRequestAnswered = (method: string, code: number): void => { this.apiRequests.inc({ method, code: String(code) }); };

  queueObserver(name: string): QueueObserver {
    return {
      added: () => { this.adds.inc({ name }); },
      retried: () => { this.retries.inc({ name }); },
      depth: (d) => { this.depth.set({ name }, d); },
      waited: (s) => { this.queueDuration.observe({ name }, s); },
    };
  }

  reconcileObserver(controller: string): ReconcileObserver {
    return {
      reconciled: (result, seconds) => {
        this.reconcileTotal.inc({ controller, result });
        if (result === 'error') this.reconcileErrors.inc({ controller });
        this.reconcileTime.observe({ controller }, seconds);
      },
    };
  }
}

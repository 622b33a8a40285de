/** `etcd-operator run`: the operator process. */
import { parseArgs } from 'node:util';
import { createLogger, logProcessWarnings } from '../runtime/log.js';
import { runOperator } from '../operator.js';
import { DEFAULT_AUTO_TLS } from '../controllers/cluster/tls.js';
import { withEnvDefaults } from './env-options.js';
import { loadKubeConfig } from './kubeconfig.js';
import { UsageError } from './usage.js';

export const RUN_USAGE = `usage: etcd-operator run (--namespace NS | --cluster-wide) [options]
Every flag can also be set as ETCD_OPERATOR_<FLAG> (e.g. ETCD_OPERATOR_LOG_LEVEL=debug); a flag wins.
  --kubeconfig PATH        kubeconfig (default: in-cluster, else $KUBECONFIG or ~/.kube/config)
  --namespace NS           manage the EtcdClusters, backups and restores of one namespace
  --cluster-wide           manage them in every namespace
  --metrics-address H:P    /metrics, /healthz, /readyz (default 0.0.0.0:8080)
  --leader-elect           elect a leader on a Lease before reconciling (run several replicas safely)
  --lease-namespace NS     namespace of the Lease (default: --namespace, else default)
  --dns-server IP          resolve member names through this DNS server (operator outside the cluster)
  --cluster-domain D       cluster DNS domain (default cluster.local)
  --workers N              concurrent reconciles per kind (default 4)
  --log-level L            trace|debug|info|warn|error (default info)
  --auto-tls-validity S    lifetime in seconds of certificates made for TLS.auto clusters (default 90 days)
  --auto-tls-renew-before S  reissue them, rolling the members, this many seconds before expiry (default 30 days)
  --replace-member-after S  a member that answers nothing for this many seconds is restarted on its volume or,
                           without one, replaced (default 60)
  --replace-on-node-loss-after S  a member that answers nothing while its node is NotReady is, after this many
                           seconds of it, removed and replaced on a live node, volume or not (default 30)
  --keep-removed-claims S  a removed member's volume claim is deleted only this many seconds later (default 600)
  --stuck-stopping-after S  a deleted member pod still stopping after this many seconds on a live node is named for
                           a person (Degraded PodStuckStopping; default 300: ten of member pods' 30 s grace periods;
                           at least 30)
  --stale-cache-after S    liveness (/healthz) fails once the leader's caches of the API have not been known current
                           for this many seconds: it would act on what it saw then (default 180, at least 60)
  --corrupt-check-interval S  etcd's leader compares every member's data with its own this often, in seconds
                           (default 600; a mismatch raises CORRUPT); pods made from then on get it
  --image IMAGE            the operator's own image, run in pods for data guards, restores and volume backups (default etcd-operator:dev)
  --allow-backup-endpoints  let EtcdBackups name etcdEndpoints: an etcd the operator does not manage, snapshotted over
                           the operator's network access into a bucket the backup names (off: only EtcdClusters)`;

const OPTIONS = {
  kubeconfig: { type: 'string' }, namespace: { type: 'string' }, 'cluster-wide': { type: 'boolean', default: false },
  'metrics-address': { type: 'string', default: '0.0.0.0:8080' }, 'leader-elect': { type: 'boolean', default: false },
  'lease-namespace': { type: 'string' }, 'dns-server': { type: 'string' }, 'cluster-domain': { type: 'string', default: 'cluster.local' },
  workers: { type: 'string', default: '4' }, 'log-level': { type: 'string', default: 'info' },
  'auto-tls-validity': { type: 'string' }, 'auto-tls-renew-before': { type: 'string' }, image: { type: 'string', default: 'etcd-operator:dev' },
  'replace-member-after': { type: 'string', default: '60' }, 'replace-on-node-loss-after': { type: 'string', default: '30' }, 'keep-removed-claims': { type: 'string', default: '600' },
  'stuck-stopping-after': { type: 'string', default: '300' }, 'stale-cache-after': { type: 'string', default: '180' },
  'corrupt-check-interval': { type: 'string', default: '600' }, 'allow-backup-endpoints': { type: 'boolean', default: false },
} as const;

/** A whole number of seconds above 0, and at least `least` where less would fail a working operator (`why`). */
function positive(flag: string, text: string, least = 1, why = ''): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${flag}: ${text} is not a whole number above 0`);
  if (n < least) throw new UsageError(`--${flag} must be at least ${least} seconds${why}`);
  return n;
}

export async function runCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: withEnvDefaults(OPTIONS) });
  if (values.namespace && values['cluster-wide']) throw new UsageError('--namespace and --cluster-wide exclude each other');
  if (!values.namespace && !values['cluster-wide']) throw new UsageError('say which clusters to manage: --namespace NS or --cluster-wide');
  const address = /^(.*):(\d+)$/.exec(values['metrics-address']);
  if (!address?.[1] || !address[2]) throw new UsageError(`--metrics-address: ${values['metrics-address']} is not HOST:PORT`);
  const autoTls = {
    ...DEFAULT_AUTO_TLS,
    ...(values['auto-tls-validity'] ? { validityMs: positive('auto-tls-validity', values['auto-tls-validity']) * 1000 } : {}),
    ...(values['auto-tls-renew-before'] ? { renewBeforeMs: positive('auto-tls-renew-before', values['auto-tls-renew-before']) * 1000 } : {}),
  };
  if (autoTls.renewBeforeMs >= autoTls.validityMs) throw new UsageError('--auto-tls-renew-before must be shorter than --auto-tls-validity');
  const workers = positive('workers', values.workers);
  const replaceAfterMs = positive('replace-member-after', values['replace-member-after']) * 1000;
  const replaceOnNodeLossAfterMs = positive('replace-on-node-loss-after', values['replace-on-node-loss-after']) * 1000;
  const claimGraceMs = positive('keep-removed-claims', values['keep-removed-claims']) * 1000;
  // Member pods have 30 s to stop: a pod within its grace period is stopping, not stuck.
  const stuckStoppingAfterMs = positive('stuck-stopping-after', values['stuck-stopping-after'], 30, ' (the member pods\' grace period)') * 1000;
  // A watch renews within 30 s and a failing list is retried within 45 s: a shorter bound fails a working operator.
  const staleCacheAfterMs = positive('stale-cache-after', values['stale-cache-after'], 60) * 1000;
  const corruptCheckSeconds = positive('corrupt-check-interval', values['corrupt-check-interval']);
  const credentials = await loadKubeConfig(values.kubeconfig);
  const log = createLogger(values['log-level']);
  logProcessWarnings(log);
  const shutdown = new AbortController();
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => { log.info({ signal: sig }, 'shutting down'); shutdown.abort(); });
  await runOperator({
    credentials, log, namespace: values.namespace, metricsHost: address[1], metricsPort: Number(address[2]),
    leaseNamespace: values['leader-elect'] ? (values['lease-namespace'] ?? values.namespace ?? 'default') : undefined,
    dnsServer: values['dns-server'], clusterDomain: values['cluster-domain'], workers, autoTls, operatorImage: values.image, replaceAfterMs, replaceOnNodeLossAfterMs, claimGraceMs, stuckStoppingAfterMs, staleCacheAfterMs, corruptCheckSeconds,
    allowBackupEndpoints: values['allow-backup-endpoints'],
  }, shutdown.signal);
  return 0;
}

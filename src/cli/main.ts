#!/usr/bin/env node
/** etcd-operator: `run` the operator, or print its `version`. */
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../runtime/log.js';
import { runOperator } from '../operator.js';
import { SNAPSHOT_USAGE, snapshotCommand } from './snapshot.js';
import { DEFAULT_AUTO_TLS } from '../controllers/cluster/tls.js';

const USAGE = `usage: etcd-operator run [options] | snapshot fetch [options] | version
  --kubeconfig PATH        kubeconfig (default: in-cluster, else $KUBECONFIG or ~/.kube/config)
  --namespace NS           watch one namespace (default: all namespaces)
  --metrics-address H:P    /metrics, /healthz, /readyz (default 0.0.0.0:8080)
  --leader-elect           elect a leader on a Lease before reconciling
  --lease-namespace NS     namespace of the Lease (default: --namespace, else default)
  --dns-server IP          resolve member names through this DNS server (operator outside the cluster)
  --cluster-domain D       cluster DNS domain (default cluster.local)
  --workers N              concurrent reconciles (default 4)
  --log-level L            trace|debug|info|warn|error (default info)
  --auto-tls-validity S    lifetime in seconds of certificates made for TLS.auto clusters (default 90 days)
  --auto-tls-renew-before S  reissue them, rolling the members, this many seconds before expiry (default 30 days)
  --image IMAGE            the operator's own image, run in pods for restores (default $ETCD_OPERATOR_IMAGE, else etcd-operator:dev)`;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

function seconds(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${text} is not a whole number of seconds`);
  return n;
}

async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'snapshot') return snapshotCommand(argv.slice(1));
  const { positionals, values } = parseArgs({
    args: argv, allowPositionals: true, options: {
      kubeconfig: { type: 'string' }, namespace: { type: 'string' }, 'metrics-address': { type: 'string', default: '0.0.0.0:8080' },
      'leader-elect': { type: 'boolean', default: false }, 'lease-namespace': { type: 'string' }, 'dns-server': { type: 'string' },
      'cluster-domain': { type: 'string', default: 'cluster.local' }, workers: { type: 'string', default: '4' },
      'log-level': { type: 'string', default: process.env.LOG_LEVEL ?? 'info' }, help: { type: 'boolean', default: false },
      'auto-tls-validity': { type: 'string' }, 'auto-tls-renew-before': { type: 'string' },
      image: { type: 'string', default: process.env.ETCD_OPERATOR_IMAGE ?? 'etcd-operator:dev' },
    },
  });
  const command = positionals[0];
  if (values.help || !command) {
    process.stdout.write(`${USAGE}\n\n${SNAPSHOT_USAGE}\n`);
    return values.help ? 0 : 2;
  }
  if (command === 'version') {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  if (command !== 'run') {
    process.stderr.write(`unknown command ${command}\n${USAGE}\n`);
    return 2;
  }
  const [host = '0.0.0.0', port = '8080'] = values['metrics-address'].split(/:(?=\d+$)/);
  const kubeConfig = new KubeConfig();
  if (values.kubeconfig) kubeConfig.loadFromFile(values.kubeconfig);
  else kubeConfig.loadFromDefault();
  const autoTls = {
    ...DEFAULT_AUTO_TLS,
    ...(values['auto-tls-validity'] ? { validityMs: seconds(values['auto-tls-validity']) * 1000 } : {}),
    ...(values['auto-tls-renew-before'] ? { renewBeforeMs: seconds(values['auto-tls-renew-before']) * 1000 } : {}),
  };
  if (autoTls.renewBeforeMs >= autoTls.validityMs) throw new Error('--auto-tls-renew-before must be shorter than --auto-tls-validity');
  const log = createLogger(values['log-level']);
  const shutdown = new AbortController();
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => { log.info({ signal: sig }, 'shutting down'); shutdown.abort(); });
  await runOperator({
    kubeConfig, log, namespace: values.namespace, metricsHost: host, metricsPort: Number(port),
    leaseNamespace: values['leader-elect'] ? (values['lease-namespace'] ?? values.namespace ?? 'default') : undefined,
    dnsServer: values['dns-server'], clusterDomain: values['cluster-domain'], workers: Number(values.workers),
    autoTls, operatorImage: values.image,
  }, shutdown.signal);
  return 0;
}

process.exitCode = await main(process.argv.slice(2));

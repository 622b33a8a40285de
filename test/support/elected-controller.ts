/**
 * A process for the leader-election test: stands for election on a Lease and, while leading, runs a real
 * Controller over the ConfigMaps of a namespace. It prints one JSON line per event on stdout:
 * {"event":"leading"|"stopped"} and {"event":"reconcile","start":ms,"end":ms}.
 * Usage: node elected-controller.js KUBECONFIG NAMESPACE IDENTITY
 */
import { kubeConfigCredentials } from '../../src/runtime/credentials.js';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiTransport } from '../../src/runtime/transport.js';
import { Reflector } from '../../src/runtime/reflector.js';
import { Controller } from '../../src/runtime/controller.js';
import { LeaderElector } from '../../src/runtime/leader-election.js';
import { createLogger } from '../../src/runtime/log.js';

const [kubeconfig, namespace, identity] = process.argv.slice(2);
if (!kubeconfig || !namespace || !identity) throw new Error('usage: elected-controller KUBECONFIG NAMESPACE IDENTITY');
const say = (event: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify({ identity, ...event })}\n`);
};

const kc = new KubeConfig();
kc.loadFromFile(kubeconfig);
const transport = new ApiTransport(kubeConfigCredentials(kc));
const log = createLogger('info', process.stderr);
const elector = new LeaderElector(transport, {
  namespace, leaseName: 'elected-controller', identity,
  leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 500,
  onError: (err) => { log.warn({ err }, 'leader election'); },
});

const shutdown = new AbortController();
process.on('SIGTERM', () => { shutdown.abort(); });

await elector.run(shutdown.signal, (leading) => {
  say({ event: 'leading', at: Date.now() });
  const reflector = new Reflector(transport, { path: `/api/v1/namespaces/${namespace}/configmaps` });
  const controller = new Controller({
    name: 'configmaps', log, workers: 2,
    reconcile: async () => {
      const start = Date.now();
      await new Promise((r) => setTimeout(r, 30));
      say({ event: 'reconcile', start, end: Date.now() });
      return undefined;
    },
  }).watches(reflector);
  leading.addEventListener('abort', () => { say({ event: 'stopped', at: Date.now() }); }, { once: true });
  return Promise.all([reflector.run(leading), controller.run(leading)]).then(() => undefined);
});

/** `etcd-operator status [NAME]`: the clusters at a glance, or one in full. */
import { parseArgs } from 'node:util';
import { GROUP, VERSION } from '../api/etcd-cluster.js';
import type { EtcdCluster } from '../api/etcd-cluster.js';
import type { EtcdBackup } from '../api/etcd-backup.js';
import { ApiTransport } from '../runtime/transport.js';
import { loadKubeConfig } from './kubeconfig.js';
import { clusterDetail, clustersTable } from './status-view.js';
import { UsageError } from './usage.js';

export const STATUS_USAGE = `usage: etcd-operator status [NAME] [-n NS | -A] [--kubeconfig PATH]
  Without NAME: every EtcdCluster of the namespace (default: the kubeconfig's, else default) or of all (-A),
  with size, readiness, version, phase, leader and last backup. With NAME: that cluster's conditions and members.`;

export async function statusCommand(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv, allowPositionals: true, options: {
      namespace: { type: 'string', short: 'n' }, 'all-namespaces': { type: 'boolean', short: 'A', default: false }, kubeconfig: { type: 'string' },
    },
  });
  const [name, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`one cluster name at most, not ${positionals.join(' ')}`);
  if (name && values['all-namespaces']) throw new UsageError('a NAME is looked up in one namespace, not with -A');
  const credentials = await loadKubeConfig(values.kubeconfig);
  const namespace = values.namespace ?? credentials.namespace ?? 'default';
  const transport = new ApiTransport(credentials);
  try {
    const base = `/apis/${GROUP}/${VERSION}${values['all-namespaces'] ? '' : `/namespaces/${namespace}`}`;
    const list = async <T>(plural: string): Promise<T[]> => ((await transport.call('GET', `${base}/${plural}`)) as { items: T[] }).items;
    const backups = await list<EtcdBackup>('etcdbackups');
    if (name) {
      const cluster = (await transport.call('GET', `${base}/etcdclusters/${name}`)) as EtcdCluster;
      process.stdout.write(`${clusterDetail(cluster, backups, Date.now())}\n`);
    } else {
      process.stdout.write(`${clustersTable(await list<EtcdCluster>('etcdclusters'), backups, Date.now())}\n`);
    }
    return 0;
  } finally {
    transport.agent.destroy();
  }
}

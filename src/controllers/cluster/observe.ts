import type { V1Pod } from '@kubernetes/client-node';
import type { Alarm, EtcdClient, EtcdMember, EtcdStatus } from '../../etcd/client.js';
import { memberName } from '../../etcd/client.js';
import { clientUrl } from '../../etcd/identity.js';
import type { ClusterAddress } from '../../etcd/identity.js';
import { podReady } from './views.js';


/**
 * etcd's view: the member list from the first member pod that answers (ready ones first), and the status of
 * every listed member that answers. Members that do not answer are simply absent from the statuses.
 */
export async function observeEtcd(etcd: EtcdClient, address: ClusterAddress, pods: V1Pod[]): Promise<{ members?: EtcdMember[]; statuses: Map<string, EtcdStatus>; alarms: Alarm[] }> {
  const candidates = pods
    .filter((p) => !p.metadata?.deletionTimestamp && p.status?.podIP)
    .sort((a, b) => Number(podReady(b)) - Number(podReady(a)));
  let members: EtcdMember[] | undefined;
  let alarms: Alarm[] = [];
  for (const pod of candidates) {
    try {
      const endpoint = clientUrl(address, pod.metadata?.name ?? '');
      members = await etcd.memberList(endpoint);
      alarms = await etcd.alarmList(endpoint);
      break;
    } catch {
      // Try the next member: this one may be starting, stopped or cut off.
    }
  }
  const statuses = new Map<string, EtcdStatus>();
  const withPods = (members ?? []).map(memberName).filter((n) => candidates.some((p) => p.metadata?.name === n));
  const answers = await Promise.allSettled(withPods.map((n) => etcd.status(clientUrl(address, n))));
  answers.forEach((a, i) => {
    const name = withPods[i];
    if (a.status === 'fulfilled' && name) statuses.set(name, a.value);
  });
  return { members, statuses, alarms };
}

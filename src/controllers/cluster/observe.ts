import type { V1Pod } from '@kubernetes/client-node';
import type { Alarm, EtcdClient, EtcdMember, EtcdStatus } from '../../etcd/client.js';
import { memberName } from '../../etcd/client.js';
import { clientUrl } from '../../etcd/identity.js';
import type { ClusterAddress } from '../../etcd/identity.js';
import { podReady } from './views.js';


/**
 * etcd's view: the member list from the first member pod that answers (ready ones first), and the status of
 * every listed member that answers. Members that do not answer are simply absent from the statuses. Alarms
 * are listed only when a member's status reports one: etcd serves an alarm list through raft, so asking on
 * every pass would append a raft entry each time and keep an idle cluster's status changing.
 */
export async function observeEtcd(etcd: EtcdClient, address: ClusterAddress, pods: V1Pod[], linearizable = false): Promise<{ members?: EtcdMember[]; statuses: Map<string, EtcdStatus>; alarms: Alarm[] }> {
  const candidates = pods
    .filter((p) => !p.metadata?.deletionTimestamp && p.status?.podIP)
    .sort((a, b) => Number(podReady(b)) - Number(podReady(a)));
  let members: EtcdMember[] | undefined;
  let listedBy = '';
  for (const pod of candidates) {
    try {
      listedBy = clientUrl(address, pod.metadata?.name ?? '');
      members = await etcd.memberList(listedBy, linearizable);
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
  const alarmed = [...statuses.values()].some((s) => s.errors.length > 0);
  // Unlisted this pass, the alarms are looked at again on the next.
  const alarms: Alarm[] = alarmed ? await etcd.alarmList(listedBy).catch(() => []) : [];
  return { members, statuses, alarms };
}

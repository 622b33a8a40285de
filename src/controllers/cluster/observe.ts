import type { V1Pod } from '@kubernetes/client-node';
import type { Alarm, AlarmType, EtcdClient, EtcdMember, EtcdStatus } from '../../etcd/client.js';
import { memberName } from '../../etcd/client.js';
import { clientUrl } from '../../etcd/identity.js';
import type { ClusterAddress } from '../../etcd/identity.js';
import { podReady } from './views.js';
import type { ClusterState } from '../../etcd/planner.js';

type CorruptionCheck = NonNullable<ClusterState['corruptionCheck']>;


/**
 * etcd's view: the member list from the first member pod that answers (ready ones first), and the status of
 * every listed member that answers. Members that do not answer are simply absent from the statuses. Alarms
 * are listed only when a member's status reports one: etcd serves an alarm list through raft, so asking on
 * every pass would append a raft entry each time and keep an idle cluster's status changing. While CORRUPT
 * is raised, every answering member's HashKV is taken too: the planner judges by the data, not the alarm.
 */
export interface EtcdView {
  members?: EtcdMember[];
  statuses: Map<string, EtcdStatus>;
  alarms: Alarm[];
  /** Only while a CORRUPT alarm is raised. */
  corruptionCheck?: CorruptionCheck;
}

export async function observeEtcd(etcd: EtcdClient, address: ClusterAddress, pods: V1Pod[], linearizable = false): Promise<EtcdView> {
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
  // A list that fails is no "no alarm": read so, a NOSPACE recovery under way would look done, and a cluster that
  // refuses writes Steady until the next look. The members' own records stand in for it.
  const alarms: Alarm[] = alarmed ? await etcd.alarmList(listedBy).catch(() => alarmsInStatuses(statuses.values())) : [];
  const corruptionCheck = alarms.some((a) => a.alarm === 'CORRUPT') ? await hashes(etcd, address, statuses) : undefined;
  return { members, statuses, alarms, ...(corruptionCheck ? { corruptionCheck } : {}) };
}

/**
 * The alarms the members' statuses name, as etcd writes each ("memberID:123 alarm:NOSPACE "; a member ID 0 left
 * out): each member's record of the cluster's alarms as it has applied them, read without raft.
 */
export function alarmsInStatuses(statuses: Iterable<EtcdStatus>): Alarm[] {
  const found = new Map<string, Alarm>();
  for (const s of statuses) {
    for (const error of s.errors) {
      const named = /^(?:memberID:(\d+)\s+)?alarm:(NOSPACE|CORRUPT)\b/.exec(error.trim());
      const [memberId, alarm] = [named?.[1] ?? '0', named?.[2] as AlarmType | undefined];
      if (alarm) found.set(`${memberId}/${alarm}`, { memberId, alarm });
    }
  }
  return [...found.values()];
}

/** Each answering member's HashKV at the lowest revision any of them has applied: who holds which data. */
async function hashes(etcd: EtcdClient, address: ClusterAddress, statuses: Map<string, EtcdStatus>): Promise<CorruptionCheck | undefined> {
  if (statuses.size === 0) return undefined;
  const revision = Math.min(...[...statuses.values()].map((s) => s.revision));
  const answers = await Promise.allSettled([...statuses.keys()].map(async (n) => [n, (await etcd.hashKV(clientUrl(address, n), revision)).hash] as const));
  return { revision, hashes: Object.fromEntries(answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []))) };
}

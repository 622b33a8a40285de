import type { ClusterSpec, Condition } from '../../api/etcd-cluster.js';

/**
 * CoreOS fields accepted so that CoreOS manifests apply unchanged, with nothing here for them to set: both
 * configured CoreOS's `check-dns` init container, a busybox `nslookup` loop that held etcd back until the
 * member's DNS name resolved, because CoreOS never restarted a member's etcd (restartPolicy Never) and one
 * that exited on a name not yet served lost its member. Here the peer Service publishes a member's name as
 * soon as its pod has an address, etcd keeps resolving its peers' names at start and retries its peers, and
 * the kubelet restarts an etcd that exits: no init container waits, and no busybox image is ever pulled.
 */
const unusedCoreOsFields = (spec: ClusterSpec): string[] => [
  ...(spec.pod?.busyboxImage !== undefined ? [`spec.pod.busyboxImage (${spec.pod.busyboxImage || '""'})`] : []),
  ...(spec.pod?.DNSTimeoutInSecond !== undefined ? [`spec.pod.DNSTimeoutInSecond (${spec.pod.DNSTimeoutInSecond})`] : []),
];

/**
 * A user who set such a field is told it does nothing, rather than left to think it does (a busybox image
 * that cannot be pulled would otherwise go unnoticed for ever): a condition while the spec sets one, absent
 * otherwise so that every other cluster's status stays as it was.
 */
export function unusedFieldsCondition(spec: ClusterSpec): Omit<Condition, 'lastTransitionTime'> | undefined {
  const fields = unusedCoreOsFields(spec);
  if (fields.length === 0) return undefined;
  return {
    type: 'UnusedFields', status: 'True', reason: 'CoreOSFieldsUnused',
    message: `${fields.join(' and ')}: accepted for compatibility with CoreOS manifests, and not used. CoreOS ran an init container that `
      + 'waited with busybox for the member\'s DNS name (busyboxImage was its image, DNSTimeoutInSecond its time limit); this operator needs '
      + 'no such wait (member names are published before pods are ready, etcd retries its peers, and the kubelet restarts etcd), '
      + `so no busybox image is pulled. The condition goes once the spec no longer sets ${fields.length > 1 ? 'them' : 'it'}`,
  };
}

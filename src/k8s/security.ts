import type { V1PodSecurityContext, V1SecurityContext } from '@kubernetes/client-node';

/** The user of the operator image (distroless "nonroot"); the operator and its one-off pods run as it. */
export const OPERATOR_UID = 65532;

/** Pod level: a non-root user and the runtime's default seccomp profile, as the "restricted" Pod Security Standard asks. */
export const nonRootPod = {
  runAsNonRoot: true, runAsUser: OPERATOR_UID, runAsGroup: OPERATOR_UID, seccompProfile: { type: 'RuntimeDefault' },
} satisfies V1PodSecurityContext;

/** Container level: no privilege escalation, no capabilities, nothing written outside the volumes. */
export const lockedDownContainer = {
  allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] },
} satisfies V1SecurityContext;

/**
 * A member pod's security context: the "restricted" standard's, under the user's spec.pod.securityContext, whose
 * fields win. All its containers (etcd, the data guard, a restore's steps) run as one user, so that each reads what
 * the others wrote. fsGroup makes the volume the member's: data an earlier member wrote as another user becomes the
 * group's each time the volume is mounted, so a member restarted on this pod keeps its data (a roll that changes the
 * user replaces the member instead, as not every volume applies fsGroup). The change policy stays Always, not OnRootMismatch: etcd makes its
 * files and directories private (0600, 0700), so a volume's root can carry the group while the data under it does
 * not; an etcd data directory holds a few dozen files, which take no time to walk. Kubelet applies fsGroup to every
 * volume type but hostPath and some NFS-like drivers: the data guard names a volume that did not. A user who sets
 * runAsUser 0 asks for root, which runAsNonRoot would refuse: it is dropped then.
 */
export function memberPodSecurity(user: V1PodSecurityContext | undefined): V1PodSecurityContext {
  const uid = user?.runAsUser ?? OPERATOR_UID;
  // The user's is JSON from the spec, typed as the client's class: its fields are copied over ours.
  return Object.assign({ ...nonRootPod, runAsNonRoot: uid !== 0, fsGroup: OPERATOR_UID }, user);
}

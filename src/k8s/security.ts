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

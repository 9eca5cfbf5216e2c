// The security context every pod gw makes runs with — the data planes (workload.ts) and the
// controller of the install manifests (src/install/): the restricted Pod Security Standard. gw's
// image runs as a non-root user (Dockerfile) and gw writes no files when it reads a cluster, so
// it needs no capability, no privilege escalation and no writable root filesystem.

export function restrictedPodSecurityContext() {
  return { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } };
}

export function restrictedContainerSecurityContext() {
  return { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } };
}

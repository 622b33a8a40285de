#!/usr/bin/env bash
# The local lab: a single-node Kubernetes built from source and run on this machine.
#   lab/lab.sh up      build what is missing (cached), start everything, print the admin kubeconfig path
#   lab/lab.sh down    stop every lab process by its recorded PID and wipe the lab's runtime state
#   lab/lab.sh status  one line per component, and the node's readiness
#   lab/lab.sh build   only build the cached binaries and images
#   lab/lab.sh restart-apiserver   stop and start kube-apiserver (tests of watch recovery use it)
. "$(dirname "$0")/build/common.sh"
. "$LAB_SRC_DIR/pki.sh"
. "$LAB_SRC_DIR/network.sh"
. "$LAB_SRC_DIR/process.sh"
. "$LAB_SRC_DIR/components.sh"

COMPONENTS="apiserver-etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy coredns"

# One lab command at a time; bounded, so a stuck holder is reported instead of waited on forever.
take_lock() {
  exec 9>"$LAB_HOME/.lock"
  flock -w 300 9 || { log "another lab command holds $LAB_HOME/.lock"; exit 1; }
}

build() {
  bash "$LAB_SRC_DIR/build/packages.sh"
  bash "$LAB_SRC_DIR/build/k8s.sh"
  bash "$LAB_SRC_DIR/build/etcd.sh"
  bash "$LAB_SRC_DIR/build/coredns.sh"
  bash "$LAB_SRC_DIR/build/minio.sh"
  bash "$LAB_SRC_DIR/build/helm.sh"
  bash "$LAB_SRC_DIR/build/images.sh"
}

up() {
  [ "$(id -u)" = 0 ] || { log "the lab needs root (network, containers, mounts)"; exit 1; }
  build
  mkdir -p "$LAB_HOME"
  take_lock
  # Idempotent: a lab that is whole is left as it is (restarting parts of it would drop its pods' traffic).
  if all_running && node_ready; then log "lab is up"; echo "$LAB_HOME/admin.kubeconfig"; return 0; fi
  # A new lab answers at the old address: kubectl's cached discovery of the last one would name stale kinds.
  rm -rf "${HOME:-/root}/.kube/cache/discovery/${LAB_NODE_IP}_6443"
  network_up
  make_pki
  start_apiserver_etcd
  start_apiserver
  start_controllers
  apply_lab_rbac
  start_containerd
  start_node
  wait_for "node $LAB_NODE_NAME Ready" 120 node_ready
  wait_for "default service account" 60 default_sa_exists
  write_lab_facts
  log "lab is up"
  echo "$LAB_HOME/admin.kubeconfig"
}

all_running() { local c; for c in $COMPONENTS; do pid_alive "$c" || return 1; done; }

# What tests and tools need to know about a running lab, in one file.
write_lab_facts() {
  local images="" v
  for v in $ETCD_VERSIONS; do images="$images${images:+, }\"quay.io/coreos/etcd:$v\""; done
  cat > "$LAB_HOME/lab.json" <<JSON
{"kubeconfig": "$LAB_HOME/admin.kubeconfig", "dnsServer": "$LAB_NODE_IP", "clusterDomain": "cluster.local",
 "nodeName": "$LAB_NODE_NAME", "kubernetesVersion": "$K8S_VERSION", "kubectl": "$K8S_BIN/kubectl", "etcdImages": [$images],
 "nodeIP": "$LAB_NODE_IP", "minio": "$LAB_CACHE/minio/$MINIO_VERSION/minio", "helm": "$LAB_CACHE/helm/$HELM_VERSION/helm"}
JSON
}

drain_pods() {
  pid_alive kubelet && pid_alive kube-apiserver || return 0
  # kubelet stops each sandbox through the CRI, which also tears down its network.
  KUBECTL delete pods --all --all-namespaces --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
  wait_for "pod sandboxes to stop" 60 no_running_tasks || true
}
no_running_tasks() { [ -z "$(ctr -a "$CONTAINERD_SOCK" -n k8s.io tasks ls -q 2>/dev/null)" ]; }

kill_leftover_tasks() {
  pid_alive containerd || return 0
  local id
  for id in $(ctr -a "$CONTAINERD_SOCK" -n k8s.io tasks ls -q 2>/dev/null); do
    ctr -a "$CONTAINERD_SOCK" -n k8s.io tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
    ctr -a "$CONTAINERD_SOCK" -n k8s.io tasks delete -f "$id" >/dev/null 2>&1 || true
  done
}

unmount_below() { # every mount under a directory, deepest first
  awk -v d="$1/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
}

down() {
  [ -d "$LAB_HOME" ] || { network_down; return 0; }
  take_lock
  drain_pods
  stop_daemon kubelet
  kill_leftover_tasks
  stop_daemon coredns
  stop_daemon kube-proxy
  [ -x "$K8S_BIN/kube-proxy" ] && "$K8S_BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
  stop_daemon containerd
  stop_daemon kube-scheduler
  stop_daemon kube-controller-manager
  stop_daemon kube-apiserver
  stop_daemon apiserver-etcd
  unmount_below "$LAB_HOME"
  network_down
  rm -rf "$LAB_HOME"
  log "lab is down"
}

# Exit status 0 only when the lab is up and its node Ready.
status() {
  local c state
  for c in $COMPONENTS; do
    if pid_alive "$c"; then state="running (pid $(cat "$LAB_HOME/run/$c.pid"))"; else state=stopped; fi
    printf '%-24s %s\n' "$c" "$state"
  done
  if pid_alive kube-apiserver; then
    printf '%-24s %s\n' "node $LAB_NODE_NAME" "$(node_ready && echo Ready || echo NotReady)"
    printf '%-24s %s\n' kubeconfig "$LAB_HOME/admin.kubeconfig"
    node_ready && return 0
  fi
  return 3
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  build) build ;;
  restart-apiserver) stop_daemon kube-apiserver; start_apiserver ;;
  *) echo "usage: lab/lab.sh up|down|status|build|restart-apiserver" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# The local lab: a Kubernetes cluster of several nodes (3 by default, ETCD_OPERATOR_LAB_NODES=1..5), built from
# source and run on this machine.
#   lab/lab.sh up      build what is missing (cached), start everything, print the admin kubeconfig path
#   lab/lab.sh down    heal every fault, stop every lab process by its recorded PID, wipe the runtime state
#   lab/lab.sh status  one line per component and per node, with the node's readiness
#   lab/lab.sh build   only build the cached binaries and images (MinIO, Helm and the CoreOS operator's images too,
#                      which `up` builds behind)
#   lab/lab.sh import-images   import on every running node the cached images it lacks (those built behind the lab)
#   lab/lab.sh restart-apiserver          stop and start kube-apiserver (tests of watch recovery use it)
#   lab/lab.sh fault KIND TARGET [ARG] [--for SECONDS]   inject a fault (kinds: lab/fault.sh)
#   lab/lab.sh heal KIND TARGET | all     undo one fault, or every fault in force
. "$(dirname "$0")/build/common.sh"
. "$LAB_SRC_DIR/pki.sh"
. "$LAB_SRC_DIR/network.sh"
. "$LAB_SRC_DIR/process.sh"
. "$LAB_SRC_DIR/components.sh"
. "$LAB_SRC_DIR/node.sh"
. "$LAB_SRC_DIR/fault.sh"

CONTROL_PLANE="apiserver-etcd kube-apiserver kube-controller-manager kube-scheduler kube-proxy coredns local-path-provisioner"
# The control plane's daemons, the expandable StorageClass's among them once started (see start_expandable).
control_plane() { echo "$CONTROL_PLANE"; expandable_started && echo csi-plugin csi-resizer; return 0; }

# One lab command at a time; bounded, so a stuck holder is reported instead of waited on forever.
take_lock() {
  exec 9>"$LAB_HOME/.lock"
  flock -w 300 9 || { log "another lab command holds $LAB_HOME/.lock"; exit 1; }
}

# What the cluster itself runs on.
build_core() {
  bash "$LAB_SRC_DIR/build/packages.sh"
  bash "$LAB_SRC_DIR/build/k8s.sh"
  bash "$LAB_SRC_DIR/build/etcd.sh"
  bash "$LAB_SRC_DIR/build/coredns.sh"
  bash "$LAB_SRC_DIR/build/local-path.sh"
  bash "$LAB_SRC_DIR/build/lab-csi.sh"
  bash "$LAB_SRC_DIR/build/images.sh"
}

# Tools only some tests use: the linearizability checker of recorded histories (the fault tests; first, as it
# builds in seconds), the S3 server (MinIO), Helm, the archived CoreOS operator with its images (the adoption
# tests run it), the CSI sidecars of the StorageClass `expandable` (the volume-growth test) and Prometheus with
# promtool (the monitoring test, last: the heaviest, and wanted latest), about half of a first build.
EXTRA_TOOLS="checker minio helm coreos-operator csi-sidecars prometheus"
EXTRAS_STATUS="$LAB_CACHE/extras.status" # "building PID", "built", or "failed: ..."
COREOS_FACTS="$LAB_CACHE/coreos-operator/images.json" # written last by build/coreos-operator.sh
build_extras() {
  local tool
  for tool in $EXTRA_TOOLS; do
    bash "$LAB_SRC_DIR/build/$tool.sh" || { echo "failed: $tool (see $LAB_CACHE/extras.log)" > "$EXTRAS_STATUS"; return 1; }
  done
  import_images_on_nodes || true # onto a running lab's nodes, now that they are built
  echo built > "$EXTRAS_STATUS"
}

# The images built behind the lab go onto its nodes behind it too (a new node starts with the lab's own only), so
# that `up` does not wait for them; a test that needs them imports what is missing (test/support/lab.ts, coreosImages).
import_extras_behind() {
  compgen -G "$LAB_CACHE/images/coreos-*.tar" >/dev/null || return 0
  setsid nice -n 19 bash "$LAB_SRC_DIR/lab.sh" import-images > "$LAB_HOME/import-images.log" 2>&1 < /dev/null 9>&- &
}

# Idempotent. A node that is not running is skipped, and so is one whose containerd does not answer (a node-kill
# fault freezes it): a later `import-images` gives it what it lacks.
import_images_on_nodes() {
  [ -d "$LAB_HOME/nodes" ] && pid_alive kube-apiserver || return 0
  local n failed=0
  for n in $(node_numbers); do
    node_running "$n" || continue
    timeout 10 ctr -a "$(node_sock "$n")" version >/dev/null 2>&1 || { log "$(node_name "$n"): containerd does not answer; images not imported"; continue; }
    import_images "$n" extras || { log "importing images on $(node_name "$n") failed"; failed=1; }
  done
  return "$failed"
}

build() { build_core; build_extras; }

# A first `up` does not wait for the extra tools: they build behind it at the lowest CPU priority, while the
# first tests run (most of a lab test's time is waiting), and a test that needs one waits for it
# (test/support/lab.ts, labTool). Their state is in $EXTRAS_STATUS.
build_extras_behind() {
  [ -x "$(checker_bin)" ] && [ -x "$LAB_CACHE/minio/$MINIO_VERSION/minio" ] && [ -x "$LAB_CACHE/helm/$HELM_VERSION/helm" ] && [ -s "$COREOS_FACTS" ] && csi_sidecars_built &&
    [ -x "$(go_tool_dir prometheus "$PROMETHEUS_VERSION" "$PROMETHEUS_TAGS")/prometheus" ] && [ -x "$(go_tool_dir promtool "$PROMETHEUS_VERSION" "$PROMETHEUS_TAGS")/promtool" ] &&
    { echo built > "$EXTRAS_STATUS"; return 0; }
  local pid; pid=$(sed -n 's/^building \([0-9]*\)$/\1/p' "$EXTRAS_STATUS" 2>/dev/null || true) # none on a first up
  [ -n "$pid" ] && pid_is_ours "$pid" "$EXTRAS_STATUS" && return 0
  setsid nice -n 19 bash "$LAB_SRC_DIR/lab.sh" build-extras > "$LAB_CACHE/extras.log" 2>&1 < /dev/null 9>&- &
  echo "building $!" > "$EXTRAS_STATUS"
  log "building $EXTRA_TOOLS behind the lab (pid $!, log $LAB_CACHE/extras.log)"
}

up() {
  [ "$(id -u)" = 0 ] || { log "the lab needs root (network, containers, mounts)"; exit 1; }
  build_core
  build_extras_behind
  mkdir -p "$LAB_HOME"
  take_lock
  heal all
  # Idempotent: a lab that is whole is left as it is (restarting parts of it would drop its pods' traffic).
  # The facts are written again all the same: a newer checkout may know more of them.
  if all_running && all_nodes_ready; then
    import_extras_behind # what was built behind it since it started
    write_lab_facts; log "lab is up"; echo "$LAB_HOME/admin.kubeconfig"; return 0
  fi
  echo "$LAB_NODES" > "$LAB_HOME/node-count"
  # A new lab answers at the old address: kubectl's cached discovery of the last one would name stale kinds.
  rm -rf "${HOME:-/root}/.kube/cache/discovery/${LAB_HOST_IP}_6443"
  network_up
  make_pki
  start_apiserver_etcd
  start_apiserver
  start_controllers
  apply_lab_rbac
  start_host_proxy
  start_coredns
  local n; for n in $(node_numbers); do start_node "$n"; done
  wait_for "$LAB_NODES nodes Ready" 120 all_nodes_ready
  wait_for "default service account" 60 default_sa_exists
  start_local_path
  # On a first `up` its sidecars are still building behind the lab: a test that needs it starts it (`expandable`).
  if csi_sidecars_built; then start_expandable; fi
  import_extras_behind
  write_lab_facts
  log "lab is up: $LAB_NODES nodes"
  echo "$LAB_HOME/admin.kubeconfig"
}

all_running() {
  local c n
  for c in $(control_plane); do pid_alive "$c" || return 1; done
  for n in $(node_numbers); do node_running "$n" || return 1; done
}

# What tests and tools need to know about a running lab, in one file.
write_lab_facts() {
  local images="" nodes="" v n
  for v in $ETCD_VERSIONS; do images="$images${images:+, }\"quay.io/coreos/etcd:$v\""; done
  for n in $(node_numbers); do
    nodes="$nodes${nodes:+,
   }{\"name\": \"$(node_name "$n")\", \"ip\": \"$(node_ip "$n")\", \"zone\": \"$(node_zone "$n")\", \"podCIDR\": \"$(node_pod_cidr "$n")\", \"containerdSocket\": \"$(node_sock "$n")\"}"
  done
  cat > "$LAB_HOME/lab.json" <<JSON
{"kubeconfig": "$LAB_HOME/admin.kubeconfig", "dnsServer": "$LAB_HOST_IP", "clusterDomain": "cluster.local",
 "kubernetesVersion": "$K8S_VERSION", "kubectl": "$K8S_BIN/kubectl", "etcdImages": [$images], "busyboxImage": "$BUSYBOX_IMAGE",
 "hostIP": "$LAB_HOST_IP", "minio": "$LAB_CACHE/minio/$MINIO_VERSION/minio", "helm": "$LAB_CACHE/helm/$HELM_VERSION/helm",
 "extrasStatus": "$EXTRAS_STATUS", "coreos": "$COREOS_FACTS", "apiserverEtcd": "http://127.0.0.1:$LAB_APISERVER_ETCD_PORT",
 "storageClass": "local-path", "expandableStorageClass": "expandable", "csiResizer": "$CSI_RESIZER_BIN",
 "checker": "$(checker_bin)", "prometheus": "$(go_tool_dir prometheus "$PROMETHEUS_VERSION" "$PROMETHEUS_TAGS")/prometheus",
 "promtool": "$(go_tool_dir promtool "$PROMETHEUS_VERSION" "$PROMETHEUS_TAGS")/promtool", "nodes": [$nodes]}
JSON
}

no_running_tasks() {
  local n; for n in $(node_numbers); do [ -z "$(ctr -a "$(node_sock "$n")" -n k8s.io tasks ls -q 2>/dev/null)" ] || return 1; done
}

drain_pods() {
  pid_alive kube-apiserver || return 0
  # Each kubelet stops its sandboxes through the CRI, which also tears down their networks.
  KUBECTL delete pods --all --all-namespaces --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
  wait_for "pod sandboxes to stop" 60 no_running_tasks || true
}

down() {
  [ -d "$LAB_HOME" ] || { network_down; return 0; }
  take_lock
  heal all
  drain_pods
  local n
  for n in $(node_numbers); do stop_daemon "$(node_name "$n")-kubelet"; done
  # The volume drivers after the kubelets, which unpublish (unmount) volumes through them while pods stop.
  for n in $(node_numbers); do
    stop_daemon "$(node_name "$n")-csi-provisioner"
    stop_daemon "$(node_name "$n")-csi-plugin"
  done
  stop_daemon csi-resizer
  stop_daemon csi-plugin
  stop_daemon local-path-provisioner
  stop_daemon coredns
  stop_daemon kube-proxy
  [ -x "$K8S_BIN/kube-proxy" ] && "$K8S_BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
  for n in $(node_numbers); do
    stop_daemon "$(node_name "$n")-kube-proxy"
    stop_daemon "$(node_name "$n")-containerd"
    [ -d "$(node_cgroup freezer "$n")" ] && kill_node_processes "$n" # container shims and what they held
  done
  stop_daemon kube-scheduler
  stop_daemon kube-controller-manager
  stop_daemon kube-apiserver
  stop_daemon apiserver-etcd
  unmount_below "$LAB_HOME"
  # An expandable volume's loop device is freed when its last mount goes (autoclear), asynchronously.
  wait_for "loop devices of the lab to be freed" 20 no_loop_devices_below "$LAB_HOME" || losetup -l | grep -F "$LAB_HOME/" >&2 || true
  for n in $(node_numbers); do node_cgroups_down "$n"; done
  network_down
  rm -rf "$LAB_HOME"
  log "lab is down"
}

no_loop_devices_below() { ! losetup -nl -O BACK-FILE | grep -qF "$1/"; } # dir

daemon_status() { # name
  local state=stopped
  pid_alive "$1" && state="running (pid $(cat "$LAB_HOME/run/$1.pid"))"
  printf '%-32s %s\n' "$1" "$state"
}

# Exit status 0 only when the lab is up and every node Ready.
status() {
  local c n
  for c in $(control_plane); do daemon_status "$c"; done
  for n in $(node_numbers); do
    for c in $(node_daemons "$n"); do daemon_status "$c"; done
  done
  local record
  for record in "$FAULTS_DIR"/*; do [ -e "$record" ] && echo "fault in force: $(basename "$record" | tr @: ' /')"; done
  if pid_alive kube-apiserver; then
    for n in $(node_numbers); do
      printf '%-32s %s%s\n' "node $(node_name "$n") ($(node_zone "$n"))" "$(node_ready "$n" && echo Ready || echo NotReady)" "$(node_marks "$n")"
    done
    printf '%-32s %s\n' kubeconfig "$LAB_HOME/admin.kubeconfig"
    all_running && all_nodes_ready && return 0
  fi
  return 3
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  build) build ;;
  build-extras) build_extras ;;
  import-images) import_images_on_nodes ;;
  expandable) csi_sidecars_built || { log "the CSI sidecars are not built yet ($EXTRAS_STATUS)"; exit 1; }; take_lock; start_expandable ;;
  restart-apiserver) stop_daemon kube-apiserver; start_apiserver ;;
  fault) shift; inject "$@" ;;
  heal) shift; heal "$@" ;;
  *) echo "usage: lab/lab.sh up|down|status|build|build-extras|import-images|expandable|restart-apiserver|fault KIND TARGET [--for S]|heal KIND TARGET|heal all" >&2; exit 2 ;;
esac

# Sourced by lab.sh: the lab's nodes. Node n is its own machine as far as Kubernetes can tell: a network
# namespace with its own address (network.sh), its own containerd (root, state, socket, runc root, CNI
# configuration and address range), its own kubelet (root dir, cgroup root, pod logs, client and serving
# certificates, zone label), its own kube-proxy, and its own disk (a loop-mounted ext4 file holding its
# local volumes). Every process of a node, its daemons and its containers, sits below the cgroup
# /lab-node-n, so that the node can be frozen or killed as a whole (fault.sh).
CGROUP_V1=/sys/fs/cgroup
NODE_DISK_SIZE=16G

node_cgroup() { echo "$CGROUP_V1/$1/$(node_name "$2")"; } # controller n

node_cgroups_up() { # n
  local n=$1 c dir
  for c in "$CGROUP_V1"/*/; do
    c=$(basename "$c"); [ "$c" = unified ] && continue
    dir=$(node_cgroup "$c" "$n"); mkdir -p "$dir"
    if [ "$c" = cpuset ]; then
      cat "$CGROUP_V1/cpuset/cpuset.cpus" > "$dir/cpuset.cpus"
      cat "$CGROUP_V1/cpuset/cpuset.mems" > "$dir/cpuset.mems"
    fi
  done
  # The node's daemons (and the container shims they start) in a freezer group of their own below the node's.
  mkdir -p "$(node_cgroup freezer "$n")/daemons"
}

node_cgroups_down() { # n: the cgroups of a node with no process left, deepest first
  local n=$1 c
  for c in "$CGROUP_V1"/*/; do
    c=$(basename "$c"); [ "$c" = unified ] && continue
    [ -d "$(node_cgroup "$c" "$n")" ] && find "$(node_cgroup "$c" "$n")" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  return 0
}

# Every process of node n, daemons and containers alike.
node_pids() { find "$(node_cgroup freezer "$1")" -name cgroup.procs -exec cat {} + 2>/dev/null; }

# A node's disk: a sparse ext4 file mounted at <node dir>/disk, so that it can fill up like a real disk.
node_disk_up() { # n
  local dir; dir=$(node_dir "$1")
  mountpoint -q "$dir/disk" && return 0
  mkdir -p "$dir/disk"
  if [ ! -s "$dir/disk.img" ]; then
    truncate -s "$NODE_DISK_SIZE" "$dir/disk.img"
    mkfs.ext4 -q -F -m 0 "$dir/disk.img"
  fi
  mount -o loop "$dir/disk.img" "$dir/disk"
  mkdir -p "$dir/disk/local-path"
}

# Starts a daemon as a process of node n: in its freezer group and its network namespace.
start_node_daemon() { # n name command...
  local n=$1 name=$2; shift 2
  start_daemon "$(node_name "$n")-$name" bash -c 'echo $$ > "$1/cgroup.procs" && exec nsenter --net="$2" "${@:3}"' _ \
    "$(node_cgroup freezer "$n")/daemons" "$NETNS_DIR/$(node_netns "$n")" "$@"
}

start_node_containerd() { # n
  local n=$1 dir sock; dir="$(node_dir "$n")"; sock=$(node_sock "$n")
  mkdir -p "$dir/containerd" "$dir/cni/net.d"
  containerd config default | sed \
    -e "s|^root = .*|root = \"$dir/containerd/root\"|" \
    -e "s|^state = .*|state = \"$dir/containerd/state\"|" \
    -e "s|^  address = \"/run/containerd/containerd.sock\"|  address = \"$sock\"|" \
    -e "s|restrict_oom_score_adj = false|restrict_oom_score_adj = true|" \
    -e "s|netns_mounts_under_state_dir = false|netns_mounts_under_state_dir = true|" \
    -e "s|sandbox_image = .*|sandbox_image = \"registry.k8s.io/pause:3.10\"|" \
    -e "s|bin_dir = \"/opt/cni/bin\"|bin_dir = \"/usr/lib/cni\"|" \
    -e "s|conf_dir = \"/etc/cni/net.d\"|conf_dir = \"$dir/cni/net.d\"|" \
    -e "s|^            Root = \"\"|            Root = \"$dir/containerd/state/runc\"|" \
    > "$dir/containerd/config.toml"
  # restrict_oom_score_adj: this sandbox withholds CAP_SYS_RESOURCE, so runc cannot lower oom_score_adj.
  # netns_mounts_under_state_dir and runc's root in the state dir: everything a reboot forgets is in one place.
  cat > "$dir/cni/net.d/10-lab.conflist" <<CNI
{"cniVersion": "1.0.0", "name": "lab", "plugins": [
  {"type": "bridge", "bridge": "labpods", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$dir/cni/ipam",
            "ranges": [[{"subnet": "$(node_pod_cidr "$n")", "gateway": "$(node_pod_gateway "$n")"}]],
            "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}
]}
CNI
  start_node_daemon "$n" containerd containerd --config "$dir/containerd/config.toml"
  wait_for "containerd of $(node_name "$n")" 30 ctr -a "$sock" version
}

# Imports every cached image archive that node n's containerd lacks (the operator's image is imported by
# scripts/operator-image.sh, build by build): the lab's own, and with "extras" those built behind the lab, the CoreOS
# operator's test bed (lab/build/coreos-operator.sh), which `lab.sh import-images` imports behind the lab too.
# One import at a time per node (a test and the lab may both import); bounded, as a node may be frozen by a fault.
import_images() { # n [extras]
  local sock archive tag have archives; sock=$(node_sock "$1")
  archives=("$LAB_CACHE"/images/etcd-v*.tar "$LAB_CACHE/images/pause.tar" "$LAB_CACHE"/images/busybox-*.tar)
  [ "${2:-}" = extras ] && archives+=("$LAB_CACHE"/images/coreos-*.tar "$LAB_CACHE"/images/etcdio-*.tar)
  (
    flock -w 300 8 || { log "another import holds $(node_dir "$1")/import.lock"; exit 1; }
    have=$(timeout 60 ctr -a "$sock" -n k8s.io images ls -q)
    for archive in "${archives[@]}"; do
      [ -e "$archive" ] || continue
      tag=$(tar -xOf "$archive" manifest.json | sed -n 's/.*"RepoTags":\["\([^"]*\)".*/\1/p')
      grep -qx "$tag" <<< "$have" && continue
      timeout 300 ctr -a "$sock" -n k8s.io images import "$archive" >/dev/null
      log "imported $tag on $(node_name "$1")"
    done
  ) 8> "$(node_dir "$1")/import.lock"
}

start_node_kubelet() { # n
  local n=$1 name dir; name=$(node_name "$n"); dir=$(node_dir "$n")
  mkdir -p "$dir/kubelet" "$dir/pod-logs"
  : > "$LAB_HOME/resolv.conf"
  cat > "$dir/kubelet.yaml" <<CFG
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $(node_ip "$n")
readOnlyPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $PKI/kubelet-serving-$name.crt
tlsPrivateKeyFile: $PKI/kubelet-serving-$name.key
cgroupDriver: cgroupfs
cgroupRoot: /$name
podLogsDir: $dir/pod-logs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$(node_sock "$n")
clusterDNS: [$LAB_HOST_IP]
clusterDomain: cluster.local
resolvConf: $LAB_HOME/resolv.conf
maxPods: 110
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
# Heartbeats every 2.5 s (a quarter of the lease) against the controller manager's 15 s grace period.
nodeLeaseDurationSeconds: 10
nodeStatusUpdateFrequency: 5s
CFG
  start_node_daemon "$n" kubelet "$K8S_BIN/kubelet" --config "$dir/kubelet.yaml" \
    --kubeconfig "$LAB_HOME/kubelet-$name.kubeconfig" --root-dir "$dir/kubelet" \
    --hostname-override "$name" --node-ip "$(node_ip "$n")" --oom-score-adj 0 \
    --node-labels "topology.kubernetes.io/zone=$(node_zone "$n"),topology.kubernetes.io/region=lab"
}

start_node_proxy() { # n
  local n=$1 name; name=$(node_name "$n")
  write_kube_proxy_config "$(node_dir "$n")/kube-proxy.yaml" "$name" "$(node_ip "$n")"
  start_node_daemon "$n" kube-proxy "$K8S_BIN/kube-proxy" --config "$(node_dir "$n")/kube-proxy.yaml"
}

# kube-proxy exits when its configuration file changes: write it only when its content does.
write_kube_proxy_config() { # path node-name address
  write_if_changed "$1" <<CFG
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $LAB_HOME/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: $LAB_POD_CIDR
hostnameOverride: $2
bindAddress: $3
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: [$3/32]
conntrack: {maxPerCore: 0}
CFG
}

start_node() { # n: a whole node, from its disk up
  local n=$1
  node_network_up "$n"
  node_cgroups_up "$n"
  node_disk_up "$n"
  start_node_containerd "$n"
  import_images "$n"
  start_node_kubelet "$n"
  start_node_proxy "$n"
  if expandable_started; then start_node_csi "$n"; fi
}

# The StorageClass `expandable` on node n: its CSI driver (lab/csi; volumes are image files on this node's disk) and
# the external-provisioner that creates volumes for the claims of pods scheduled here (--node-deployment: it takes
# only claims whose selected node is this one, so CreateVolume reaches this node's driver). Kubelet finds the driver
# through its registration socket; the provisioner starts once kubelet has written the driver into the node's
# CSINode, the sign that kubelet can publish and grow its volumes.
start_node_csi() { # n
  local n=$1 name dir sock; name=$(node_name "$n"); dir=$(node_dir "$n")
  sock="$dir/kubelet/plugins/$EXPANDABLE_DRIVER/csi.sock"
  mkdir -p "$dir/disk/expandable"
  start_node_daemon "$n" csi-plugin "$(lab_csi_bin)" --endpoint "$sock" --node-id "$name" --state-dir "$dir/disk/expandable" \
    --registration-socket "$dir/kubelet/plugins_registry/$EXPANDABLE_DRIVER-reg.sock"
  wait_for "$EXPANDABLE_DRIVER in the CSINode of $name" 60 csi_driver_registered "$n"
  # Leader election is off by default; capacity tracking stays off (no CSIStorageCapacity objects to keep).
  start_node_daemon "$n" csi-provisioner env NODE_NAME="$name" "$LAB_CACHE/csi-provisioner/$CSI_PROVISIONER_VERSION/csi-provisioner" \
    --kubeconfig "$LAB_HOME/admin.kubeconfig" --csi-address "$sock" --node-deployment \
    --node-deployment-immediate-binding=false --strict-topology --immediate-topology=false \
    --timeout 30s --worker-threads 4 --snapshot-orphan-sweep-interval 0 --v 2
}

csi_driver_registered() { # n
  KUBECTL get csinode "$(node_name "$1")" -o jsonpath='{.spec.drivers[*].name}' | tr ' ' '\n' | grep -qxF "$EXPANDABLE_DRIVER"
}

# The names under which node n's daemons are recorded (lab/process.sh).
node_daemons() {
  local c; for c in containerd kubelet kube-proxy $(expandable_started && echo csi-plugin csi-provisioner); do echo "$(node_name "$1")-$c"; done
}

node_running() { # n
  local d; for d in $(node_daemons "$1"); do pid_alive "$d" || return 1; done
}

# What else keeps pods off node n, for a status line: ", cordoned" and its taints, if any.
node_marks() { # n
  KUBECTL get node "$(node_name "$1")" -o jsonpath='{.spec.unschedulable}{" "}{range .spec.taints[*]}{.key}:{.effect} {end}' 2>/dev/null |
    sed -e 's/^true/, cordoned/' -e 's/^ *//' -e 's/^\([^,]\)/, taints: \1/' -e 's/ *$//'
}

node_ready() { # n
  [ "$(KUBECTL get node "$(node_name "$1")" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}
all_nodes_ready() { local n; for n in $(node_numbers); do node_ready "$n" || return 1; done; }

# Kills every process of node n at once (SIGKILL; no clean shutdown) and waits until none is left.
kill_node_processes() { # n
  local n=$1 i d
  echo THAWED > "$(node_cgroup freezer "$n")/freezer.state" 2>/dev/null || true
  for i in $(seq 1 50); do
    [ -z "$(node_pids "$n")" ] && break
    # shellcheck disable=SC2046
    kill -KILL $(node_pids "$n") 2>/dev/null || true
    sleep 0.1
  done
  for d in $(node_daemons "$n"); do rm -f "$LAB_HOME/run/$d.pid" "$LAB_HOME/run/$d.pid.start"; done
  [ -z "$(node_pids "$n")" ] || { log "processes of $(node_name "$n") survived SIGKILL"; return 1; }
}

# What a power cycle forgets: the runtime state (as /run is), with the mounts in it (pod network namespaces,
# container root filesystems, shm), every mount kubelet made (Secrets and tokens in memory, volumes bound into
# pods), and the node's packet filter rules. The node's disk, kubelet's root (emptyDir content) and containerd's
# root (images, container records) stay.
forget_runtime_state() { # n
  local n=$1 dir t; dir=$(node_dir "$1")
  unmount_below "$dir/containerd/state"
  unmount_below "$dir/kubelet"
  rm -rf "$dir/containerd/state"
  for t in filter nat mangle raw; do
    in_node_netns "$n" iptables -t "$t" -F || true
    in_node_netns "$n" iptables -t "$t" -X || true
  done
}

unmount_below() { # every mount under a directory, deepest first
  awk -v d="$1/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
}

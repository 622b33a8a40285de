# Sourced by the lab scripts: cache layout, the lab's addresses and nodes, and logging.
set -euo pipefail
LAB_SRC_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=versions.env
. "$LAB_SRC_DIR/build/versions.env"
LAB_CACHE="${ETCD_OPERATOR_CACHE:-$HOME/.cache/etcd-operator-lab}"
mkdir -p "$LAB_CACHE"
export GOFLAGS=-mod=mod CGO_ENABLED=0
log() { printf '{"ts":"%s","component":"lab","msg":"%s"}\n' "$(date -u +%FT%T.%3NZ)" "$*" >&2; }

# Runtime layout of a running lab; wiped by `lab down`, so each `lab up` gives a fresh cluster.
LAB_HOME="${ETCD_OPERATOR_LAB_HOME:-/var/lib/etcd-operator-lab}"
LAB_BRIDGE=etcdlab0
# The host's address on the lab bridge: the control plane (API server, CoreDNS) and servers tests start
# (MinIO) listen here; the nodes reach it over their links to the bridge.
LAB_HOST_IP=10.88.0.1
LAB_NODE_CIDR=10.88.0.0/16
LAB_POD_CIDR=10.89.0.0/16
LAB_SERVICE_CIDR=10.96.0.0/16
LAB_API_SERVICE_IP=10.96.0.1
LAB_APISERVER_ETCD_PORT=12379
K8S_BIN="$LAB_CACHE/k8s/$K8S_VERSION"
APISERVER_ETCD_VERSION="${ETCD_VERSIONS%% *}"
BUSYBOX_IMAGE=lab.local/busybox:1 # the volume provisioner's helper pods run it
EXPANDABLE_DRIVER=expandable.lab.local # the CSI driver (lab/csi) of the StorageClass `expandable`

# The nodes: ETCD_OPERATOR_LAB_NODES of them (1-5, default 3), node n named lab-node-n, each in its own
# network namespace with address 10.88.0.(10+n) on the bridge, pods in 10.89.n.0/24, zones a, b, c in turn.
# A running lab keeps the size it was started with (recorded at `up`).
LAB_NODES=$(cat "$LAB_HOME/node-count" 2>/dev/null || echo "${ETCD_OPERATOR_LAB_NODES:-3}")
case "$LAB_NODES" in [1-5]) ;; *) log "ETCD_OPERATOR_LAB_NODES must be 1 to 5, not $LAB_NODES"; exit 2 ;; esac
ZONES=(zone-a zone-b zone-c)
node_numbers() { seq 1 "$LAB_NODES"; }
node_name() { echo "lab-node-$1"; }
node_ip() { echo "10.88.0.$((10 + $1))"; }
node_pod_cidr() { echo "10.89.$1.0/24"; }
node_pod_gateway() { echo "10.89.$1.1"; }
node_zone() { echo "${ZONES[$((($1 - 1) % ${#ZONES[@]}))]}"; }
node_dir() { echo "$LAB_HOME/nodes/$(node_name "$1")"; }
node_netns() { node_name "$1"; }
node_link() { echo "veth-node$1"; } # the host end of node n's link to the bridge
node_sock() { echo "$(node_dir "$1")/containerd/state/containerd.sock"; }
node_number() { # lab-node-n or n -> n
  local n=${1#lab-node-}
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le "$LAB_NODES" ] || { log "no node $1 in this lab"; return 2; }
  echo "$n"
}

CSI_RESIZER_BIN="$LAB_CACHE/csi-resizer/$CSI_RESIZER_VERSION/csi-resizer" # built last of the sidecars (build/csi-sidecars.sh)
csi_sidecars_built() { [ -x "$LAB_CACHE/csi-provisioner/$CSI_PROVISIONER_VERSION/csi-provisioner" ] && [ -x "$CSI_RESIZER_BIN" ]; }
# The StorageClass `expandable` was started on this lab (lab/components.sh, start_expandable).
expandable_started() { [ -e "$LAB_HOME/expandable" ]; }

# A Go program of the lab's own (lab/<dir>), cached under a hash of its sources (tests aside), so that an edited
# one is built again: the CSI driver (lab/csi, build/lab-csi.sh) and the linearizability checker of recorded
# client histories (lab/checker, build/checker.sh).
own_go_bin() { # dir name
  local f key; key=$(for f in "$LAB_SRC_DIR/$1"/go.mod "$LAB_SRC_DIR/$1"/go.sum "$LAB_SRC_DIR/$1"/*.go; do
    case "$f" in *_test.go) ;; *) cat "$f" ;; esac
  done | sha256sum | cut -c1-16)
  echo "$LAB_CACHE/$2/$key/$2"
}
lab_csi_bin() { own_go_bin csi lab-csi; }
checker_bin() { own_go_bin checker checker; }
build_own_go() { # dir name
  local bin; bin=$(own_go_bin "$1" "$2")
  [ -x "$bin" ] && { log "$2 cached in $(dirname "$bin")"; return 0; }
  mkdir -p "$(dirname "$bin")"
  log "building $2 into $(dirname "$bin")"
  (cd "$LAB_SRC_DIR/$1" && go build -buildvcs=false -trimpath -ldflags "-s -w" -o "$bin.tmp" .)
  mv "$bin.tmp" "$bin"
}

# A Go program built from its module at a pinned version into $LAB_CACHE/<name>/<version>/, once.
# Where install_go_tool puts a tool: by version and, if built with tags, by them too (a change of tags builds anew).
go_tool_dir() { # name version [build tags]
  echo "$LAB_CACHE/$1/$2${3:+-$(echo "$3" | tr ',' '+')}"
}

install_go_tool() { # name module version [build tags]
  local out; out=$(go_tool_dir "$1" "$3" "${4:-}")
  [ -x "$out/$1" ] && { log "$1 $3 cached"; return 0; }
  mkdir -p "$out" "$out.partial"
  log "building $1 $3"
  # Into a side directory first: a test that waits for the binary never runs a half-written one.
  GOBIN="$out.partial" go install -trimpath -ldflags "-s -w" ${4:+-tags "$4"} "$2@$3"
  mv "$out.partial/$1" "$out/$1"
  rmdir "$out.partial"
}

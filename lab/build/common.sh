# Sourced by the lab scripts: cache layout and logging.
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
LAB_NODE_NAME=lab-node
LAB_NODE_IP=10.88.0.1
LAB_POD_CIDR=10.88.0.0/16
LAB_SERVICE_CIDR=10.96.0.0/16
LAB_API_SERVICE_IP=10.96.0.1
LAB_APISERVER_ETCD_PORT=12379
K8S_BIN="$LAB_CACHE/k8s/$K8S_VERSION"
APISERVER_ETCD_VERSION="${ETCD_VERSIONS%% *}"
CONTAINERD_SOCK="$LAB_HOME/containerd/containerd.sock"

# A Go program built from its module at a pinned version into $LAB_CACHE/<name>/<version>/, once.
install_go_tool() { # name module version
  local out="$LAB_CACHE/$1/$3"
  [ -x "$out/$1" ] && { log "$1 $3 cached"; return 0; }
  mkdir -p "$out"
  log "building $1 $3"
  GOBIN="$out" go install -trimpath -ldflags "-s -w" "$2@$3"
}

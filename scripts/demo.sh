#!/usr/bin/env bash
# The main job on the local lab: starts the lab if needed, installs the CRDs, runs the operator (as a lab
# daemon, stopped by `lab/lab.sh down`), applies examples/etcd-cluster.yaml, shows it come up until
# Available, then writes and reads a key through the cluster's client Service.
set -euo pipefail
cd "$(dirname "$0")/.."
. lab/build/common.sh
. lab/process.sh
[ -d node_modules ] || npm ci --no-audit --no-fund
npm run --silent build
kubeconfig=$(bash lab/lab.sh up)
K() { "$K8S_BIN/kubectl" --kubeconfig "$kubeconfig" "$@"; }
step() { printf '\n== %s\n' "$*"; }

step "CRDs"
K apply -f deploy/crds/
K wait --for condition=established crd/etcdclusters.etcd.database.coreos.com --timeout=60s >/dev/null

step "operator (logs: $LAB_HOME/logs/etcd-operator.log)"
start_daemon etcd-operator node dist/src/cli/main.js run --kubeconfig "$kubeconfig" --namespace default \
  --dns-server "$LAB_NODE_IP" --metrics-address 127.0.0.1:18080
wait_for "operator ready" 60 curl -fsS http://127.0.0.1:18080/readyz

step "EtcdCluster example (3 members)"
K apply -f examples/etcd-cluster.yaml
started=$(date +%s%N); last=""
for _ in $(seq 1 240); do
  now=$(K get etcd example -o jsonpath='{.status.phase} {.status.readyMembers}/{.spec.size} ready, available={.status.conditions[?(@.type=="Available")].status}')
  [ "$now" != "$last" ] && printf '%6.1fs  %s\n' "$(( ($(date +%s%N) - started) / 1000000 ))e-3" "$now" && last=$now
  case "$now" in "Running 3/3 ready, available=True") break ;; esac
  sleep 0.5
done
case "$last" in "Running 3/3 ready, available=True") ;; *) echo "the cluster did not become Available; see $LAB_HOME/logs/etcd-operator.log"; exit 1 ;; esac
K get etcd example
K get pods -l etcd_cluster=example -o wide

step "a key through the client Service"
ip=$(K get svc example-client -o jsonpath='{.spec.clusterIP}')
etcdctl="$LAB_CACHE/etcd/${ETCD_VERSIONS%% *}/etcdctl --endpoints http://$ip:2379 --command-timeout=3s"
wait_for "client Service" 30 $etcdctl put demo-key "hello from the etcd operator"
$etcdctl get demo-key
$etcdctl member list -w table

cat <<HELP

The cluster is up. Try:
  $K8S_BIN/kubectl --kubeconfig $kubeconfig scale etcd/example --replicas=5
  $K8S_BIN/kubectl --kubeconfig $kubeconfig get etcd example -w
  $K8S_BIN/kubectl --kubeconfig $kubeconfig delete \$($K8S_BIN/kubectl --kubeconfig $kubeconfig get pod -l etcd_cluster=example -o name | head -1)   # a member is replaced
Clean up: lab/lab.sh down   (stops the operator and the lab)
HELP

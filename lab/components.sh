# Sourced by lab.sh: configuration and start of each lab component.
KUBECTL() { "$K8S_BIN/kubectl" --kubeconfig "$LAB_HOME/admin.kubeconfig" "$@"; }
PKI="$LAB_HOME/pki"

start_apiserver_etcd() {
  start_daemon apiserver-etcd "$LAB_CACHE/etcd/$APISERVER_ETCD_VERSION/etcd" --name lab \
    --data-dir "$LAB_HOME/apiserver-etcd" \
    --listen-client-urls "http://127.0.0.1:$LAB_APISERVER_ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$LAB_APISERVER_ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$((LAB_APISERVER_ETCD_PORT + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((LAB_APISERVER_ETCD_PORT + 1))" \
    --initial-cluster "lab=http://127.0.0.1:$((LAB_APISERVER_ETCD_PORT + 1))" \
    --unsafe-no-fsync --quota-backend-bytes 4294967296 --log-level warn
  wait_for "apiserver etcd" 30 curl -fsS "http://127.0.0.1:$LAB_APISERVER_ETCD_PORT/health"
}

start_apiserver() {
  start_daemon kube-apiserver "$K8S_BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$LAB_APISERVER_ETCD_PORT" \
    --bind-address "$LAB_NODE_IP" --advertise-address "$LAB_NODE_IP" --secure-port 6443 \
    --client-ca-file "$PKI/ca.crt" --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$PKI/ca.crt" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --service-cluster-ip-range "$LAB_SERVICE_CIDR" \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --kubelet-preferred-address-types InternalIP,Hostname \
    --allow-privileged=true --profiling=false --event-ttl 1h
  wait_for "kube-apiserver ready" 120 KUBECTL get --raw /readyz
}

start_controllers() {
  start_daemon kube-controller-manager "$K8S_BIN/kube-controller-manager" \
    --kubeconfig "$LAB_HOME/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$LAB_HOME/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$LAB_HOME/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
    --root-ca-file "$PKI/ca.crt" --service-account-private-key-file "$PKI/sa.key" \
    --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
    --service-cluster-ip-range "$LAB_SERVICE_CIDR" --cluster-name lab
  start_daemon kube-scheduler "$K8S_BIN/kube-scheduler" \
    --kubeconfig "$LAB_HOME/scheduler.kubeconfig" \
    --authentication-kubeconfig "$LAB_HOME/scheduler.kubeconfig" \
    --authorization-kubeconfig "$LAB_HOME/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false
}

start_containerd() {
  local dir="$LAB_HOME/containerd"; mkdir -p "$dir" "$LAB_HOME/cni/net.d"
  containerd config default | sed \
    -e "s|^root = .*|root = \"$dir/root\"|" \
    -e "s|^state = .*|state = \"$dir/state\"|" \
    -e "s|^  address = \"/run/containerd/containerd.sock\"|  address = \"$CONTAINERD_SOCK\"|" \
    -e "s|restrict_oom_score_adj = false|restrict_oom_score_adj = true|" \
    -e "s|sandbox_image = .*|sandbox_image = \"registry.k8s.io/pause:3.10\"|" \
    -e "s|bin_dir = \"/opt/cni/bin\"|bin_dir = \"/usr/lib/cni\"|" \
    -e "s|conf_dir = \"/etc/cni/net.d\"|conf_dir = \"$LAB_HOME/cni/net.d\"|" \
    > "$dir/config.toml"
  # restrict_oom_score_adj: this sandbox withholds CAP_SYS_RESOURCE, so runc cannot lower oom_score_adj.
  cat > "$LAB_HOME/cni/net.d/10-lab.conflist" <<CNI
{"cniVersion": "1.0.0", "name": "lab", "plugins": [
  {"type": "bridge", "bridge": "$LAB_BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$LAB_HOME/cni/ipam",
            "ranges": [[{"subnet": "$LAB_POD_CIDR", "rangeStart": "10.88.1.1", "gateway": "$LAB_NODE_IP"}]],
            "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}
]}
CNI
  start_daemon containerd containerd --config "$dir/config.toml"
  wait_for containerd 30 ctr -a "$CONTAINERD_SOCK" version
  local archive tag
  for archive in "$LAB_CACHE"/images/*.tar; do
    tag=$(tar -xOf "$archive" manifest.json | sed -n 's/.*"RepoTags":\["\([^"]*\)".*/\1/p')
    ctr -a "$CONTAINERD_SOCK" -n k8s.io images ls -q | grep -qx "$tag" && continue
    ctr -a "$CONTAINERD_SOCK" -n k8s.io images import "$archive" >/dev/null
    log "imported $tag"
  done
}

start_node() {
  local dir="$LAB_HOME/kubelet"; mkdir -p "$dir"
  : > "$LAB_HOME/resolv.conf"
  cat > "$LAB_HOME/kubelet.yaml" <<CFG
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $LAB_NODE_IP
readOnlyPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $PKI/kubelet-serving.crt
tlsPrivateKeyFile: $PKI/kubelet-serving.key
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
clusterDNS: [$LAB_NODE_IP]
clusterDomain: cluster.local
resolvConf: $LAB_HOME/resolv.conf
maxPods: 250
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
CFG
  start_daemon kubelet "$K8S_BIN/kubelet" --config "$LAB_HOME/kubelet.yaml" \
    --kubeconfig "$LAB_HOME/kubelet.kubeconfig" --root-dir "$dir" \
    --hostname-override "$LAB_NODE_NAME" --node-ip "$LAB_NODE_IP" --oom-score-adj 0
  # kube-proxy exits when its configuration file changes: rewrite it only when its content does.
  write_if_changed "$LAB_HOME/kube-proxy.yaml" <<CFG
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $LAB_HOME/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: $LAB_POD_CIDR
hostnameOverride: $LAB_NODE_NAME
bindAddress: $LAB_NODE_IP
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: [$LAB_NODE_IP/32]
conntrack: {maxPerCore: 0}
CFG
  start_daemon kube-proxy "$K8S_BIN/kube-proxy" --config "$LAB_HOME/kube-proxy.yaml"
  cat > "$LAB_HOME/Corefile" <<CFG
.:53 {
    bind $LAB_NODE_IP
    errors
    kubernetes cluster.local in-addr.arpa {
        kubeconfig $LAB_HOME/coredns.kubeconfig lab
        pods insecure
        ttl 5
    }
}
CFG
  start_daemon coredns "$LAB_CACHE/coredns/$COREDNS_VERSION/coredns" -conf "$LAB_HOME/Corefile"
}

apply_lab_rbac() {
  KUBECTL apply -f - >/dev/null <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "lab:coredns"}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "lab:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "lab:coredns"}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: "lab:coredns"}
YAML
}

node_ready() {
  [ "$(KUBECTL get node "$LAB_NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}
default_sa_exists() { KUBECTL -n default get serviceaccount default; }

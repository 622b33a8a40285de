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
    --bind-address "$LAB_HOST_IP" --advertise-address "$LAB_HOST_IP" --secure-port 6443 \
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
    --service-cluster-ip-range "$LAB_SERVICE_CIDR" --cluster-name lab \
    --node-monitor-period 2s --node-monitor-grace-period 15s
  start_daemon kube-scheduler "$K8S_BIN/kube-scheduler" \
    --kubeconfig "$LAB_HOME/scheduler.kubeconfig" \
    --authentication-kubeconfig "$LAB_HOME/scheduler.kubeconfig" \
    --authorization-kubeconfig "$LAB_HOME/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false
}

# The host's own kube-proxy: the host is no node, but tests and tools run here and reach ClusterIPs too.
start_host_proxy() {
  write_kube_proxy_config "$LAB_HOME/kube-proxy.yaml" lab-host "$LAB_HOST_IP"
  start_daemon kube-proxy "$K8S_BIN/kube-proxy" --config "$LAB_HOME/kube-proxy.yaml"
}

start_coredns() {
  cat > "$LAB_HOME/Corefile" <<CFG
.:53 {
    bind $LAB_HOST_IP
    errors
    kubernetes cluster.local in-addr.arpa {
        kubeconfig $LAB_HOME/coredns.kubeconfig lab
        pods insecure
        ttl 5
    }
}
CFG
  start_daemon coredns "$LAB_CACHE/coredns/$COREDNS_VERSION/$COREDNS_PLUGINS/coredns" -conf "$LAB_HOME/Corefile"
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

default_sa_exists() { KUBECTL -n default get serviceaccount default; }

# rancher's local-path-provisioner, out of cluster like the other control-plane parts: the default StorageClass,
# binding when the first pod is scheduled (WaitForFirstConsumer), each volume a directory on its node's disk
# with a `local` PersistentVolume pinned to the node (kubelet applies fsGroup to `local` volumes).
start_local_path() {
  local dir="$LAB_HOME/local-path" n paths=""
  mkdir -p "$dir"
  for n in $(node_numbers); do
    paths="$paths${paths:+, }{\"node\": \"$(node_name "$n")\", \"paths\": [\"$(node_dir "$n")/disk/local-path\"]}"
  done
  cat > "$dir/config.json" <<JSON
{"nodePathMap": [$paths], "setupCommand": "/bin/volume-setup", "teardownCommand": "/bin/volume-teardown"}
JSON
  cat > "$dir/helperPod.yaml" <<YAML
apiVersion: v1
kind: Pod
metadata: {name: helper-pod}
spec:
  priorityClassName: system-node-critical
  containers: [{name: helper-pod, image: "$BUSYBOX_IMAGE", imagePullPolicy: Never}]
YAML
  KUBECTL apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: local-path-storage}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-path
  annotations: {storageclass.kubernetes.io/is-default-class: "true", defaultVolumeType: local}
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
YAML
  wait_for "service account of local-path-storage" 60 KUBECTL -n local-path-storage get serviceaccount default
  start_daemon local-path-provisioner "$LAB_CACHE/local-path-provisioner/$LOCAL_PATH_VERSION/local-path-provisioner" start \
    --kubeconfig "$LAB_HOME/admin.kubeconfig" --namespace local-path-storage --service-account-name default \
    --config "$dir/config.json" --helper-pod-file "$dir/helperPod.yaml" --health-port 18080
}

# The StorageClass `expandable`: XFS volumes on the node's disk, bound when the first pod is scheduled, that grow
# while a pod uses them (1Gi -> 2Gi shows in the pod's df). Idempotent; started by `up` once its sidecars are built
# (behind the lab on a first build), else by the first test that needs it (`lab.sh expandable`). Each running node
# gets its driver and provisioner (node.sh, start_node_csi); then the cluster's part: the CSIDriver (no attach step, fsGroup applied by kubelet) and the
# StorageClass, and the external-resizer. The resizer has a driver instance of its own on the host, as the sidecars
# exit when their driver's socket goes away and a node's driver dies in every fault of its node. The driver offers
# no controller expansion, so the resizer only records the new size on the volume and kubelet does the growing.
start_expandable() {
  # Nodes whose kubelet runs (one frozen by a fault gets them when it is healed or restarted).
  local n; for n in $(node_numbers); do if pid_alive "$(node_name "$n")-kubelet"; then start_node_csi "$n"; fi; done
  KUBECTL apply -f - >/dev/null <<YAML
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: $EXPANDABLE_DRIVER}
spec: {attachRequired: false, podInfoOnMount: false, volumeLifecycleModes: [Persistent], fsGroupPolicy: File, storageCapacity: false}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: expandable}
provisioner: $EXPANDABLE_DRIVER
parameters: {csi.storage.k8s.io/fstype: xfs}
volumeBindingMode: WaitForFirstConsumer
allowVolumeExpansion: true
reclaimPolicy: Delete
YAML
  local sock="$LAB_HOME/csi/controller.sock"
  start_daemon csi-plugin "$(lab_csi_bin)" --endpoint "$sock" --node-id lab-host --state-dir "$LAB_HOME/csi/host"
  wait_for "$EXPANDABLE_DRIVER on the host" 30 test -S "$sock"
  start_daemon csi-resizer "$CSI_RESIZER_BIN" --kubeconfig "$LAB_HOME/admin.kubeconfig" \
    --csi-address "$sock" --timeout 30s --handle-volume-inuse-error=false --v 2
  touch "$LAB_HOME/expandable" # from now on a part of the lab: status, heal and node restarts cover it
}

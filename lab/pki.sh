# Sourced by lab.sh: a CA and one certificate per component, as a real cluster has.
sign_cert() { # name subject kind(client|server|both) [sans]
  local name=$1 subj=$2 kind=$3 sans=${4:-} dir="$LAB_HOME/pki"
  [ -s "$dir/$name.crt" ] && return 0
  local usage="clientAuth"; [ "$kind" = server ] && usage="serverAuth"; [ "$kind" = both ] && usage="serverAuth,clientAuth"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"
    [ -n "$sans" ] && echo "subjectAltName=$sans"
  } > "$dir/$name.ext"
  openssl genrsa -out "$dir/$name.key" 2048 2>/dev/null
  openssl req -new -key "$dir/$name.key" -subj "$subj" -out "$dir/$name.csr" 2>/dev/null
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
    -days 365 -sha256 -extfile "$dir/$name.ext" -out "$dir/$name.crt" 2>/dev/null
  rm -f "$dir/$name.csr" "$dir/$name.ext"
}

write_kubeconfig() { # name user-cert server
  local name=$1 cert=$2 server=${3:-https://$LAB_HOST_IP:6443} pki="$LAB_HOME/pki"
  cat > "$LAB_HOME/$name.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: lab
  cluster:
    server: $server
    certificate-authority: $pki/ca.crt
users:
- name: $cert
  user:
    client-certificate: $pki/$cert.crt
    client-key: $pki/$cert.key
contexts:
- name: lab
  context: {cluster: lab, user: $cert}
current-context: lab
KC
}

make_pki() {
  local dir="$LAB_HOME/pki"; mkdir -p "$dir"; chmod 700 "$dir"
  if [ ! -s "$dir/ca.crt" ]; then
    openssl genrsa -out "$dir/ca.key" 2048 2>/dev/null
    openssl req -x509 -new -key "$dir/ca.key" -subj "/CN=etcd-operator-lab-ca" -days 3650 -sha256 -out "$dir/ca.crt" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
  fi
  [ -s "$dir/sa.key" ] || { openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null; openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null; }
  sign_cert apiserver "/CN=kube-apiserver" server \
    "IP:$LAB_HOST_IP,IP:127.0.0.1,IP:$LAB_API_SERVICE_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  sign_cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" client
  sign_cert admin "/O=system:masters/CN=lab-admin" client
  sign_cert controller-manager "/CN=system:kube-controller-manager" client
  sign_cert scheduler "/CN=system:kube-scheduler" client
  sign_cert kube-proxy "/CN=system:kube-proxy" client
  sign_cert coredns "/CN=lab:coredns" client
  local n name
  for n in $(node_numbers); do
    name=$(node_name "$n")
    # NodeRestriction admits a kubelet only for its own Node object: one identity per node, as in a real cluster.
    sign_cert "kubelet-$name" "/O=system:nodes/CN=system:node:$name" client
    sign_cert "kubelet-serving-$name" "/CN=$name" server "IP:$(node_ip "$n"),DNS:$name"
    write_kubeconfig "kubelet-$name" "kubelet-$name"
  done
  write_kubeconfig admin admin
  write_kubeconfig controller-manager controller-manager
  write_kubeconfig scheduler scheduler
  write_kubeconfig kube-proxy kube-proxy
  write_kubeconfig coredns coredns
}

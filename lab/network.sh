# Sourced by lab.sh: the lab bridge and the nodes' network namespaces.
#
# Each node is a network namespace with one link (a veth pair) to the bridge, its own address on it, and a
# bridge of its own for its pods (10.89.n.0/24). Nodes route each other's pod ranges over the bridge, so
# traffic between nodes really crosses their links: setting a node's link down cuts the node and its pods
# off from everyone while every process on it keeps running.
#
# Pod and Service addresses are confined to the machine: the Service range is routed to the bridge (so an
# un-translated ClusterIP packet never leaves it), pods have no NAT to the outside, and forwarding from the
# bridge to any other interface is dropped.
FORWARD_GUARDS=(
  "FORWARD -i $LAB_BRIDGE ! -o $LAB_BRIDGE -j DROP"
  "FORWARD -i $LAB_BRIDGE -o $LAB_BRIDGE -j ACCEPT"
)
NETNS_DIR=/var/run/netns

in_node_netns() { local n=$1; shift; nsenter --net="$NETNS_DIR/$(node_netns "$n")" "$@"; }

network_up() {
  if ! ip link show "$LAB_BRIDGE" >/dev/null 2>&1; then
    ip link add "$LAB_BRIDGE" type bridge
    ip addr add "$LAB_HOST_IP/16" dev "$LAB_BRIDGE"
  fi
  ip link set "$LAB_BRIDGE" up
  ip route replace "$LAB_SERVICE_CIDR" dev "$LAB_BRIDGE" src "$LAB_HOST_IP"
  local rule; for rule in "${FORWARD_GUARDS[@]}"; do
    # shellcheck disable=SC2086
    iptables -C $rule 2>/dev/null || iptables -I $rule
  done
  echo 1 > /proc/sys/net/ipv4/ip_forward
  # Pod -> ClusterIP -> pod on the same bridge needs bridged replies to pass conntrack.
  modprobe br_netfilter 2>/dev/null || true
  [ -w /proc/sys/net/bridge/bridge-nf-call-iptables ] && echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables
  local n; for n in $(node_numbers); do node_network_up "$n"; done
}

node_network_up() { # n
  local n=$1 m ns link; ns=$(node_netns "$n"); link=$(node_link "$n")
  [ -e "$NETNS_DIR/$ns" ] || ip netns add "$ns"
  if ! ip link show "$link" >/dev/null 2>&1; then
    ip link add "$link" type veth peer name eth0 netns "$ns"
    ip link set "$link" master "$LAB_BRIDGE"
  fi
  ip link set "$link" up
  in_node_netns "$n" sh -c "
    ip link set lo up
    ip addr replace $(node_ip "$n")/16 dev eth0
    ip link set eth0 up
    ip route replace default via $LAB_HOST_IP
    echo 1 > /proc/sys/net/ipv4/ip_forward
    [ ! -w /proc/sys/net/bridge/bridge-nf-call-iptables ] || echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables"
  for m in $(node_numbers); do
    [ "$m" = "$n" ] && continue
    in_node_netns "$n" ip route replace "$(node_pod_cidr "$m")" via "$(node_ip "$m")"
  done
  ip route replace "$(node_pod_cidr "$n")" via "$(node_ip "$n")"
}

network_down() {
  local rule n; for rule in "${FORWARD_GUARDS[@]}"; do
    # shellcheck disable=SC2086
    while iptables -C $rule 2>/dev/null; do iptables -D $rule; done
  done
  for n in 1 2 3 4 5; do # every node a lab of any size may have left behind
    ip route del "$(node_pod_cidr "$n")" 2>/dev/null || true
    ip link del "$(node_link "$n")" 2>/dev/null || true
    ip netns del "$(node_netns "$n")" 2>/dev/null || true
  done
  ip route del "$LAB_SERVICE_CIDR" dev "$LAB_BRIDGE" 2>/dev/null || true
  ip link del "$LAB_BRIDGE" 2>/dev/null || true
}

# Sourced by lab.sh: the lab bridge. Pod and Service addresses are confined to it: the Service range is
# routed to the bridge (so an un-translated ClusterIP packet never leaves the machine), pods have no NAT to
# the outside, and forwarding from the bridge to any other interface is dropped.
FORWARD_GUARDS=(
  "FORWARD -i $LAB_BRIDGE ! -o $LAB_BRIDGE -j DROP"
  "FORWARD -i $LAB_BRIDGE -o $LAB_BRIDGE -j ACCEPT"
)

network_up() {
  if ! ip link show "$LAB_BRIDGE" >/dev/null 2>&1; then
    ip link add "$LAB_BRIDGE" type bridge
    ip addr add "$LAB_NODE_IP/16" dev "$LAB_BRIDGE"
  fi
  ip link set "$LAB_BRIDGE" up
  ip route replace "$LAB_SERVICE_CIDR" dev "$LAB_BRIDGE" src "$LAB_NODE_IP"
  local rule; for rule in "${FORWARD_GUARDS[@]}"; do
    # shellcheck disable=SC2086
    iptables -C $rule 2>/dev/null || iptables -I $rule
  done
  echo 1 > /proc/sys/net/ipv4/ip_forward
  # Pod -> ClusterIP -> pod on the same bridge needs bridged replies to pass conntrack.
  [ -w /proc/sys/net/bridge/bridge-nf-call-iptables ] && echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables
  return 0
}

network_down() {
  local rule; for rule in "${FORWARD_GUARDS[@]}"; do
    # shellcheck disable=SC2086
    while iptables -C $rule 2>/dev/null; do iptables -D $rule; done
  done
  ip route del "$LAB_SERVICE_CIDR" dev "$LAB_BRIDGE" 2>/dev/null || true
  ip link del "$LAB_BRIDGE" 2>/dev/null || true
}

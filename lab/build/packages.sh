#!/usr/bin/env bash
# Installs the Debian packages the lab's node needs, when they are missing (a fresh machine has none of them).
. "$(dirname "$0")/common.sh"
# xfsprogs: the expandable volumes are XFS (lab/csi/main.go says why not ext4).
LAB_PACKAGES="containerd runc containernetworking-plugins iptables conntrack openssl curl busybox-static e2fsprogs xfsprogs"
missing=""
for p in $LAB_PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
log "installing Debian packages:$missing"
apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null

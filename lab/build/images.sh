#!/usr/bin/env bash
# Packs the locally built binaries into docker-archive images (no registry, no daemon): one etcd image per
# pinned version, tagged as the operator names them by default, and the pod sandbox (pause) image.
# Layers are written with fixed owners, order and times, so the same binaries give the same image digest.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/pack.sh"
PAUSE_IMAGE=registry.k8s.io/pause:3.10
out="$LAB_CACHE/images"; mkdir -p "$out"

for v in $ETCD_VERSIONS; do
  archive="$out/etcd-$v.tar"; [ -s "$archive" ] && continue
  rootfs=$(mktemp -d); mkdir -p "$rootfs/usr/local/bin" "$rootfs/var/lib/etcd" "$rootfs/tmp"
  chmod 1777 "$rootfs/tmp"; chmod 700 "$rootfs/var/lib/etcd"
  cp "$LAB_CACHE/etcd/$v/etcd" "$LAB_CACHE/etcd/$v/etcdctl" "$LAB_CACHE/etcd/$v/etcdutl" "$rootfs/usr/local/bin/"
  pack_image "$archive" "quay.io/coreos/etcd:$v" "$rootfs" '["/usr/local/bin/etcd"]'
done

archive="$out/pause.tar"
if [ ! -s "$archive" ]; then
  rootfs=$(mktemp -d)
  (cd "$LAB_SRC_DIR/images/pause" && go build -trimpath -ldflags "-s -w" -o "$rootfs/pause" .)
  pack_image "$archive" "$PAUSE_IMAGE" "$rootfs" '["/pause"]'
fi

# The local-path provisioner's helper pods make and remove volume directories with it, and test pods that need a
# shell run it (Debian's busybox-static; its wget crashes, nc does not). Keyed by its recipe, so a changed one is
# packed again.
BUSYBOX_TOOLS="sh mkdir rm chmod ls cat wc date sleep nc grep"
SETUP='#!/bin/sh\nset -e\nmkdir -m 0777 -p "$VOL_DIR"\n'
TEARDOWN='#!/bin/sh\nset -e\nrm -rf "$VOL_DIR"\n'
key=$( { sha256sum /bin/busybox; echo "$BUSYBOX_TOOLS $SETUP $TEARDOWN"; } | sha256sum | cut -c1-12)
archive="$out/busybox-$key.tar"
if [ ! -s "$archive" ]; then
  rm -f "$out"/busybox-*.tar
  rootfs=$(mktemp -d); mkdir -p "$rootfs/bin" "$rootfs/tmp"; chmod 1777 "$rootfs/tmp"
  cp /bin/busybox "$rootfs/bin/busybox"
  for tool in $BUSYBOX_TOOLS; do ln -s busybox "$rootfs/bin/$tool"; done
  # shellcheck disable=SC2059
  printf "$SETUP" > "$rootfs/bin/volume-setup"
  # shellcheck disable=SC2059
  printf "$TEARDOWN" > "$rootfs/bin/volume-teardown"
  chmod 755 "$rootfs/bin/volume-setup" "$rootfs/bin/volume-teardown"
  pack_image "$archive" "$BUSYBOX_IMAGE" "$rootfs" '["/bin/sh"]'
fi

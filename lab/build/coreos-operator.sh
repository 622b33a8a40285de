#!/usr/bin/env bash
# Builds the archived CoreOS etcd-operator (v0.9.4, kept in shared/peers beside the checkout; see its README) and
# packs the images it needs on the lab, for the tests of adopting clusters it made (issue 33). Not part of the
# product; lab.sh builds it behind the lab.
#   lab.local/coreos-etcd-operator:v0.9.4   the operator (run it with -create-crd=false: the lab has our CRDs)
#   lab.local/coreos-etcd:v<etcd version>   one per $ETCD_VERSIONS: CoreOS names member images <repository>:v<version>,
#                                           and its probes and init steps run /bin/sh, so etcd's binaries + busybox
#   lab.local/coreos-busybox:glibc          for spec.pod.busyboxImage: the check-dns init container of each member
#                                           runs `/bin/sh -c 'while ( ! nslookup <member>.<cluster>.<ns>.svc ) ...'`
# The lab's busybox cannot be that image: the nslookup of Debian's busybox-static has its own resolver, which ignores
# resolv.conf's search domains, so `<member>.<cluster>.<ns>.svc` never resolves (CoreOS's default,
# busybox:1.28.0-glibc, resolved with glibc); and its sh runs its own applet before any nslookup on PATH. So this one
# is dash (Debian's /bin/sh) with an nslookup that asks glibc (getent hosts), and busybox for sleep.
# The source predates Go modules: the go.mod kept beside it pins the revisions of its Gopkg.lock. The binary and the
# images are keyed by the hash of the source, go.mod and go.sum (and of the etcd binaries and busybox), so they are
# built once; the images are imported onto the nodes by lab.sh (import_images). Last, it writes $FACTS, which tests
# wait for (test/support/lab.ts, coreosImages); anything rebuilt removes it first.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/pack.sh"
PEERS="${ETCD_OPERATOR_PEERS:-$(cd "$LAB_SRC_DIR/../.." && pwd)/shared/peers}"
SOURCE="$PEERS/coreos-etcd-operator-13a1831.tar.gz"
COREOS_OPERATOR_IMAGE=lab.local/coreos-etcd-operator:v0.9.4
COREOS_ETCD_REPOSITORY=lab.local/coreos-etcd
COREOS_ETCD_TOOLS="sh sleep cat ls ps grep env" # the probes and init steps run sh and etcdctl; the rest is for a person
COREOS_BUSYBOX_IMAGE=lab.local/coreos-busybox:glibc
# shellcheck disable=SC2016 # $1 is for the script written
NSLOOKUP='#!/bin/sh\n# CoreOS check-dns: resolve with glibc, which applies the search domains of resolv.conf.\nexec getent hosts "$1"\n'

FACTS="$LAB_CACHE/coreos-operator/images.json"
stale() { rm -f "$FACTS"; }

key=$(cat "$SOURCE" "$PEERS/coreos-go.mod" "$PEERS/coreos-go.sum" | sha256sum | cut -c1-12)
out="$LAB_CACHE/coreos-operator/$key"
if [ -x "$out/etcd-operator" ]; then
  log "coreos etcd-operator $key cached in $out"
else
  stale; work="$out.src"; rm -rf "$work"; mkdir -p "$work" "$out"
  tar -xzf "$SOURCE" -C "$work" --strip-components=1
  cp "$PEERS/coreos-go.mod" "$work/go.mod"; cp "$PEERS/coreos-go.sum" "$work/go.sum"
  log "building coreos etcd-operator $key (v0.9.4, minutes on a cold module cache)"
  start=$(date +%s)
  (cd "$work" && GO111MODULE=on CGO_ENABLED=0 nice -n 19 go build -trimpath -ldflags "-s -w" -o "$out/etcd-operator.tmp" ./cmd/operator)
  mv "$out/etcd-operator.tmp" "$out/etcd-operator" # a side name first: a waiter never runs a half-written binary
  rm -rf "$work"
  log "built coreos etcd-operator $key in $(($(date +%s) - start)) s"
fi

images="$LAB_CACHE/images"; mkdir -p "$images"
[ -s "$images/coreos-operator-$key.tar" ] || stale
pack_binary_image coreos-operator "$key" "$COREOS_OPERATOR_IMAGE" "$out/etcd-operator" /usr/local/bin/etcd-operator

for v in $ETCD_VERSIONS; do
  bin="$LAB_CACHE/etcd/$v"
  vkey=$( { sha256sum "$bin/etcd" "$bin/etcdctl" "$bin/etcdutl" /bin/busybox; echo "$COREOS_ETCD_TOOLS"; } | sha256sum | cut -c1-12)
  archive="$images/coreos-etcd-$v-$vkey.tar"
  [ -s "$archive" ] && continue
  stale; rm -f "$images/coreos-etcd-$v-"*.tar
  rootfs=$(mktemp -d); mkdir -p "$rootfs/usr/local/bin" "$rootfs/bin" "$rootfs/var/etcd" "$rootfs/tmp"
  chmod 1777 "$rootfs/tmp"
  cp "$bin/etcd" "$bin/etcdctl" "$bin/etcdutl" "$rootfs/usr/local/bin/"
  cp /bin/busybox "$rootfs/bin/busybox"
  for tool in $COREOS_ETCD_TOOLS; do ln -s busybox "$rootfs/bin/$tool"; done
  pack_image "$archive" "$COREOS_ETCD_REPOSITORY:$v" "$rootfs" '["/usr/local/bin/etcd"]'
done

# The check-dns image: dash and getent with the libraries they link, at their own paths.
libs() { { ldd /bin/dash; ldd /usr/bin/getent; } | grep -o '/[^ ]*' | sort -u; }
bkey=$( { sha256sum /bin/dash /usr/bin/getent /bin/busybox; libs | xargs readlink -f | xargs sha256sum; echo "$NSLOOKUP"; } | sha256sum | cut -c1-12)
archive="$images/coreos-busybox-$bkey.tar"
if [ ! -s "$archive" ]; then
  stale; rm -f "$images"/coreos-busybox-*.tar
  rootfs=$(mktemp -d); mkdir -p "$rootfs/bin" "$rootfs/usr/bin" "$rootfs/etc" "$rootfs/tmp"; chmod 1777 "$rootfs/tmp"
  cp /bin/dash "$rootfs/bin/sh"; cp /usr/bin/getent "$rootfs/usr/bin/getent"; cp /bin/busybox "$rootfs/bin/busybox"
  for lib in $(libs); do mkdir -p "$rootfs$(dirname "$lib")"; cp -L "$lib" "$rootfs$lib"; done
  for tool in sleep echo cat ls; do ln -s busybox "$rootfs/bin/$tool"; done
  # shellcheck disable=SC2059
  printf "$NSLOOKUP" > "$rootfs/bin/nslookup"; chmod 755 "$rootfs/bin/nslookup"
  echo 'hosts: files dns' > "$rootfs/etc/nsswitch.conf"
  pack_image "$archive" "$COREOS_BUSYBOX_IMAGE" "$rootfs" '["/bin/sh"]'
fi

versions=""; for v in $ETCD_VERSIONS; do versions="$versions${versions:+, }\"${v#v}\""; done
printf '{"operatorImage": "%s", "etcdRepository": "%s", "etcdVersions": [%s], "busyboxImage": "%s"}\n' \
  "$COREOS_OPERATOR_IMAGE" "$COREOS_ETCD_REPOSITORY" "$versions" "$COREOS_BUSYBOX_IMAGE" > "$FACTS.tmp"
mv "$FACTS.tmp" "$FACTS"

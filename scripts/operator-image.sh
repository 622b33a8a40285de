#!/usr/bin/env bash
# Packs the built operator (dist/, production node_modules, and this machine's node with the libraries it
# links) into the image `etcd-operator:dev`, and imports it into every lab node's containerd when the lab is up.
# Pods the operator makes (restore and backup steps) run it; the archive is cached by content.
set -euo pipefail
cd "$(dirname "$0")/.."
. lab/build/common.sh
. lab/build/pack.sh
TAG=etcd-operator:dev
[ -f dist/src/cli/main.js ] || { log "build first (npm run build)"; exit 1; }
node_bin=$(readlink -f "$(command -v node)")
key=$( { find dist -type f -print0 | sort -z | xargs -0 sha256sum; sha256sum package-lock.json "$node_bin" scripts/operator-image.sh lab/build/pack.sh; } | sha256sum | cut -c1-16)
archive="$LAB_CACHE/images/etcd-operator-$key.tar"
if [ ! -s "$archive" ]; then
  mkdir -p "$LAB_CACHE/images"
  rm -f "$LAB_CACHE"/images/etcd-operator-*.tar
  rootfs=$(mktemp -d)
  mkdir -p "$rootfs/app" "$rootfs/nodejs/bin" "$rootfs/tmp" "$rootfs/etc"
  chmod 1777 "$rootfs/tmp"
  # node where distroless keeps it (the Dockerfile's image): the Deployment's command names that path.
  cp "$node_bin" "$rootfs/nodejs/bin/node"
  # The dynamic loader and every library node links, at their own paths.
  for lib in $(ldd "$node_bin" | grep -o '/[^ ]*'); do mkdir -p "$rootfs$(dirname "$lib")"; cp -L "$lib" "$rootfs$lib"; done
  cp -r dist package.json package-lock.json "$rootfs/app/"
  cp -r node_modules "$rootfs/app/"
  (cd "$rootfs/app" && npm prune --omit=dev --no-audit --no-fund >/dev/null 2>&1)
  printf 'root:x:0:0::/:/sbin/nologin\nnonroot:x:65532:65532::/tmp:/sbin/nologin\n' > "$rootfs/etc/passwd"
  pack_image "$archive" "$TAG" "$rootfs" '["run"]' '["/nodejs/bin/node","/app/dist/src/cli/main.js"]'
fi
if bash lab/lab.sh status >/dev/null 2>&1; then
  for n in $(node_numbers); do ctr -a "$(node_sock "$n")" -n k8s.io images import "$archive" >/dev/null; done
  log "imported $TAG ($key) on $LAB_NODES nodes"
fi
echo "$TAG"

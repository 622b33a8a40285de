#!/usr/bin/env bash
# Packs the locally built binaries into docker-archive images (no registry, no daemon): one etcd image per
# pinned version, tagged as the operator names them by default, and the pod sandbox (pause) image.
# Layers are written with fixed owners, order and times, so the same binaries give the same image digest.
. "$(dirname "$0")/common.sh"
PAUSE_IMAGE=registry.k8s.io/pause:3.10
out="$LAB_CACHE/images"; mkdir -p "$out"

pack_image() { # archive-path tag rootfs-dir cmd-json
  local archive=$1 tag=$2 rootfs=$3 cmd=$4 tmp diff_id config_id
  tmp=$(mktemp -d); chmod 755 "$rootfs"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$rootfs" -cf "$tmp/layer.tar" .
  diff_id=$(sha256sum "$tmp/layer.tar" | cut -d' ' -f1)
  mkdir "$tmp/$diff_id"; mv "$tmp/layer.tar" "$tmp/$diff_id/layer.tar"
  printf '{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z","config":{"Env":["PATH=/usr/local/bin:/usr/bin:/bin"],"Cmd":%s,"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$cmd" "$diff_id" > "$tmp/config.json"
  config_id=$(sha256sum "$tmp/config.json" | cut -d' ' -f1)
  mv "$tmp/config.json" "$tmp/$config_id.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' "$config_id" "$tag" "$diff_id" > "$tmp/manifest.json"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$tmp" -cf "$archive.tmp" manifest.json "$config_id.json" "$diff_id"
  mv "$archive.tmp" "$archive"
  rm -rf "$tmp" "$rootfs"
  log "packed $tag"
}

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

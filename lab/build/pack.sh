# Sourced: pack_image writes a docker-archive image (one layer) that containerd imports, with no registry
# and no daemon. Layers are written with fixed owners, order and times, so the same files give the same digest.
pack_image() { # archive-path tag rootfs-dir cmd-json [entrypoint-json]
  local archive=$1 tag=$2 rootfs=$3 cmd=$4 entrypoint=${5:-null} tmp diff_id config_id
  tmp=$(mktemp -d); chmod 755 "$rootfs"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$rootfs" -cf "$tmp/layer.tar" .
  diff_id=$(sha256sum "$tmp/layer.tar" | cut -d' ' -f1)
  mkdir "$tmp/$diff_id"; mv "$tmp/layer.tar" "$tmp/$diff_id/layer.tar"
  printf '{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z","config":{"Env":["PATH=/usr/local/bin:/usr/bin:/bin"],"Entrypoint":%s,"Cmd":%s,"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$entrypoint" "$cmd" "$diff_id" > "$tmp/config.json"
  config_id=$(sha256sum "$tmp/config.json" | cut -d' ' -f1)
  mv "$tmp/config.json" "$tmp/$config_id.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' "$config_id" "$tag" "$diff_id" > "$tmp/manifest.json"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$tmp" -cf "$archive.tmp" manifest.json "$config_id.json" "$diff_id"
  mv "$archive.tmp" "$archive"
  rm -rf "$tmp" "$rootfs"
  log "packed $tag"
}

# One static binary as an image: the binary at `path-in-image` (its command) and a writable /tmp. Packed into
# $LAB_CACHE/images/<name>-<key>.tar unless that is there; other keys' archives of that name are removed first.
pack_binary_image() { # name key tag binary path-in-image
  local images="$LAB_CACHE/images" rootfs; mkdir -p "$images"
  [ -s "$images/$1-$2.tar" ] && return 0
  rm -f "$images/$1-"*.tar
  rootfs=$(mktemp -d); mkdir -p "$rootfs/$(dirname "$5")" "$rootfs/tmp"; chmod 1777 "$rootfs/tmp"
  cp "$4" "$rootfs/$5"
  pack_image "$images/$1-$2.tar" "$3" "$rootfs" "[\"$5\"]"
}

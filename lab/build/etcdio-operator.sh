#!/usr/bin/env bash
# Builds the official etcd-io/etcd-operator (kept in shared/peers; see its README) for the side-by-side bench
# (issue 36), packs its image and renders its manifests. Not part of the product, nor of `npm test`: `npm run bench`
# runs this, and `lab.sh import-images` then puts the image on the nodes.
#   lab.local/etcdio-etcd-operator:77c7f10   its manager, a static Go binary (upstream packs it on distroless as
#                                            65532, which the manifests' runAsNonRoot needs said: runAsUser below)
#   $OUT/manifests.yaml                      its kustomize config/default rendered by the lab's kubectl (no kustomize
#                                            needed), with the image, the user, and metrics on plain :8080 set
# Its members run `<spec.imageRegistry>:<spec.version>` with /usr/local/bin/etcd, which the lab's quay.io/coreos/etcd
# images are. Keyed by the hash of the source, so built once.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/pack.sh"
PEERS="${ETCD_OPERATOR_PEERS:-$(cd "$LAB_SRC_DIR/../.." && pwd)/shared/peers}"
SOURCE="$PEERS/etcd-io-etcd-operator-77c7f10.tar.gz"
IMAGE=lab.local/etcdio-etcd-operator:77c7f10

key=$(sha256sum "$SOURCE" | cut -c1-12)
out="$LAB_CACHE/etcdio-operator/$key"
if [ -x "$out/manager" ] && [ -s "$out/manifests.yaml" ]; then
  log "etcd-io etcd-operator $key cached in $out"
else
  work="$out.src"; rm -rf "$work"; mkdir -p "$work" "$out"
  tar -xzf "$SOURCE" -C "$work" --strip-components=1
  log "building etcd-io etcd-operator $key (minutes on a cold module cache)"
  start=$(date +%s)
  (cd "$work" && GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 nice -n 19 go build -trimpath -ldflags "-s -w" -o "$out/manager.tmp" ./cmd)
  # Its Deployment asks for runAsNonRoot without a user (distroless carries it): say 65532. Metrics on plain HTTP at
  # :8080, as ours are, for the bench to read its memory and requests the same way.
  "$K8S_BIN/kubectl" kustomize "$work/config/default" \
    | sed -e "s#image: controller:latest#image: $IMAGE#" -e "s#image: etcd-operator:v0.1#image: $IMAGE#" \
          -e 's#- --metrics-bind-address=:8443#- --metrics-bind-address=:8080\n        - --metrics-secure=false#' \
          -e 's#runAsNonRoot: true#runAsNonRoot: true\n        runAsUser: 65532#' > "$out/manifests.yaml.tmp"
  grep -q "image: $IMAGE" "$out/manifests.yaml.tmp" || { log "etcd-io manifests: no image line to set"; exit 1; }
  mv "$out/manifests.yaml.tmp" "$out/manifests.yaml"
  mv "$out/manager.tmp" "$out/manager" # a side name first: a waiter never runs a half-written binary
  rm -rf "$work"
  log "built etcd-io etcd-operator $key in $(($(date +%s) - start)) s"
fi

pack_binary_image etcdio-operator "$key" "$IMAGE" "$out/manager" /manager
printf '{"image": "%s", "manifests": "%s"}\n' "$IMAGE" "$out/manifests.yaml"

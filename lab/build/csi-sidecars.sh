#!/usr/bin/env bash
# Builds the upstream CSI sidecars that drive the lab's expandable volumes (lab/csi): external-provisioner (one per
# node, --node-deployment) and external-resizer (one, on the host). Each module restates its own replace directives
# (k8s.io/* pinned to one release), which `go install module/cmd@version` refuses, so each gets a wrapper module, as
# k8s.sh does; separate ones, since the two pin different Kubernetes releases.
. "$(dirname "$0")/common.sh"

wrapped_build() { # name module version main-package
  local name=$1 module=$2 version=$3 pkg=$4 out work json modfile dir
  out="$LAB_CACHE/$name/$version"
  [ -x "$out/$name" ] && { log "$name $version cached"; return 0; }
  work="$out.wrapper"; mkdir -p "$work" "$out"
  json=$(go mod download -json "$module@$version")
  modfile=$(sed -n 's/.*"GoMod": "\(.*\)".*/\1/p' <<< "$json")
  dir=$(sed -n 's/.*"Dir": "\(.*\)".*/\1/p' <<< "$json")
  {
    echo "module lab.local/$name"
    echo
    echo "go $(sed -n 's/^go \([0-9.]*\).*/\1/p' "$modfile")"
    echo
    sed -n 's/^godebug /godebug /p' "$modfile"
    echo "require $module $version"
    echo
    # Upstream's replace directives, single-line or in a block; relative paths name nothing outside its repository.
    awk '/^replace *\(/ {b = 1; next} b && /^\)/ {b = 0; next} b {print "replace " $0; next} /^replace / {print}' "$modfile" |
      grep -v '=> *\.'
  } > "$work/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$pkg" > "$work/tools.go"
  # Upstream's go.sum first: the wrapper then takes the hashes upstream built with (tidy drops the rest).
  cp "$dir/go.sum" "$work/go.sum"
  log "resolving modules for $name $version"
  (cd "$work" && { go mod tidy >/dev/null 2>&1 || go mod tidy; })
  log "building $name $version"
  (cd "$work" && go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$out/$name.tmp" "$pkg")
  mv "$out/$name.tmp" "$out/$name"
  log "$name $version built in $out"
}

wrapped_build csi-provisioner github.com/kubernetes-csi/external-provisioner/v6 "$CSI_PROVISIONER_VERSION" \
  github.com/kubernetes-csi/external-provisioner/v6/cmd/csi-provisioner
wrapped_build csi-resizer github.com/kubernetes-csi/external-resizer "$CSI_RESIZER_VERSION" \
  github.com/kubernetes-csi/external-resizer/cmd/csi-resizer

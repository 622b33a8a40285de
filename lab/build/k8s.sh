#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy and kubectl from the
# k8s.io/kubernetes module through a wrapper module (k8s.io/kubernetes replaces its staging modules with
# local paths, which a dependent module must restate as the published v0.x versions).
. "$(dirname "$0")/common.sh"
out="$LAB_CACHE/k8s/$K8S_VERSION"
bins="kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl"
missing=""; for b in $bins; do [ -x "$out/$b" ] || missing="$missing $b"; done
[ -z "$missing" ] && { log "kubernetes $K8S_VERSION cached in $out"; exit 0; }
work="$LAB_CACHE/k8s/$K8S_VERSION.wrapper"
mkdir -p "$work" "$out"
cd "$work"
staging_version="v0.${K8S_VERSION#v1.}"
modfile=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
{
  echo "module lab.local/k8s"
  echo
  echo "go $(sed -n 's/^go \([0-9.]*\).*/\1/p' "$modfile")"
  echo
  sed -n 's/^godebug /godebug /p' "$modfile"
  echo "require k8s.io/kubernetes $K8S_VERSION"
  echo
  # Each staging replace in the upstream go.mod names a module that the wrapper must pin to its release.
  grep -E '^\s*k8s.io/[a-z0-9-]+ => ./staging/' "$modfile" | awk -v v="$staging_version" '{print "replace " $1 " => " $1 " " v}'
} > go.mod
cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubectl/pkg/cmd"
)
GO
log "resolving modules for kubernetes $K8S_VERSION"
go mod tidy >/dev/null 2>&1 || go mod tidy
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$K8S_VERSION" | cut -d. -f2) -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
for b in $missing; do
  pkg="k8s.io/kubernetes/cmd/$b"
  log "building $b $K8S_VERSION"
  go build -trimpath -ldflags "$ldflags" -o "$out/$b.tmp" "$pkg"
  mv "$out/$b.tmp" "$out/$b"
done
log "kubernetes $K8S_VERSION built in $out"

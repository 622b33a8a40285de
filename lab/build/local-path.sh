#!/usr/bin/env bash
# Builds rancher's local-path-provisioner (the lab's default StorageClass) from its Go module, in a wrapper
# module whose go.sum pins the provisioner's own hashes (the checksum database does not list this tag, nor one
# of its dependencies) and then takes the hashes of its dependencies from the provisioner's own go.sum.
. "$(dirname "$0")/common.sh"
out="$LAB_CACHE/local-path-provisioner/$LOCAL_PATH_VERSION"
[ -x "$out/local-path-provisioner" ] && { log "local-path-provisioner $LOCAL_PATH_VERSION cached"; exit 0; }
work="$out.wrapper"; mkdir -p "$work" "$out"; cd "$work"
cat > go.mod <<MOD
module lab.local/local-path

go 1.26

require github.com/rancher/local-path-provisioner $LOCAL_PATH_VERSION
MOD
cat > go.sum <<SUM
github.com/rancher/local-path-provisioner v0.0.37 h1:xRGhYXH31HtfbYWA9Qe8zAqCmHuw4dDRZNrDlWe0OQg=
github.com/rancher/local-path-provisioner v0.0.37/go.mod h1:0HbWPjgPwrSumhQdlYvD6Day+FvR+0NXjGUJBl8McfA=
SUM
printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/rancher/local-path-provisioner"\n' > tools.go
log "building local-path-provisioner $LOCAL_PATH_VERSION"
dir=$(go mod download -json "github.com/rancher/local-path-provisioner@$LOCAL_PATH_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
cat "$dir/go.sum" >> go.sum
go mod tidy
go build -trimpath -ldflags "-s -w" -o "$out/local-path-provisioner" github.com/rancher/local-path-provisioner

#!/usr/bin/env bash
# Builds static etcd, etcdctl and etcdutl for each pinned version through a wrapper module (etcd's own
# modules carry relative replace directives, so `go install module@version` cannot build them).
. "$(dirname "$0")/common.sh"
for v in $ETCD_VERSIONS; do
  out="$LAB_CACHE/etcd/$v"
  if [ -x "$out/etcd" ] && [ -x "$out/etcdctl" ] && [ -x "$out/etcdutl" ]; then log "etcd $v cached in $out"; continue; fi
  work="$out.wrapper"; mkdir -p "$work" "$out"; cd "$work"
  cat > go.mod <<MOD
module lab.local/etcd

go 1.23

require (
	go.etcd.io/etcd/server/v3 $v
	go.etcd.io/etcd/etcdctl/v3 $v
	go.etcd.io/etcd/etcdutl/v3 $v
)
MOD
  cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "go.etcd.io/etcd/etcdctl/v3"
	_ "go.etcd.io/etcd/etcdutl/v3"
	_ "go.etcd.io/etcd/server/v3"
)
GO
  log "resolving modules for etcd $v"
  go mod tidy
  for pair in etcd:go.etcd.io/etcd/server/v3 etcdctl:go.etcd.io/etcd/etcdctl/v3 etcdutl:go.etcd.io/etcd/etcdutl/v3; do
    log "building ${pair%%:*} $v"
    go build -trimpath -ldflags "-s -w" -o "$out/${pair%%:*}.tmp" "${pair#*:}"
    mv "$out/${pair%%:*}.tmp" "$out/${pair%%:*}"
  done
done

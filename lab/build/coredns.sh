#!/usr/bin/env bash
# Builds CoreDNS (cluster DNS for pod and Service names) from its Go module.
. "$(dirname "$0")/common.sh"
out="$LAB_CACHE/coredns/$COREDNS_VERSION"
[ -x "$out/coredns" ] && { log "coredns $COREDNS_VERSION cached"; exit 0; }
mkdir -p "$out"
log "building coredns $COREDNS_VERSION"
GOBIN="$out" go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@$COREDNS_VERSION"

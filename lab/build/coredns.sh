#!/usr/bin/env bash
# Builds CoreDNS (cluster DNS for pod and Service names) from its Go module with only the plugins the lab's
# Corefile uses (lab/components.sh): CoreDNS's own main links about fifty, cloud DNS providers' SDKs among them,
# for a quarter of a cold lab build. A main of our own sets the plugin list, as CoreDNS documents for builds
# with a chosen set of plugins.
. "$(dirname "$0")/common.sh"
out="$LAB_CACHE/coredns/$COREDNS_VERSION/$COREDNS_PLUGINS"
[ -x "$out/coredns" ] && { log "coredns $COREDNS_VERSION ($COREDNS_PLUGINS) cached"; exit 0; }
work="$out.wrapper"; mkdir -p "$work" "$out"; cd "$work"
printf 'module lab.local/coredns\n\ngo 1.26\n\nrequire github.com/coredns/coredns %s\n' "$COREDNS_VERSION" > go.mod
{
  echo 'package main'
  echo
  echo 'import ('
  echo '	"github.com/coredns/coredns/core/dnsserver"'
  echo '	"github.com/coredns/coredns/coremain"'
  for p in ${COREDNS_PLUGINS//,/ }; do echo "	_ \"github.com/coredns/coredns/plugin/$p\""; done
  echo ')'
  echo
  echo "func init() { dnsserver.Directives = []string{\"${COREDNS_PLUGINS//,/\", \"}\"} }"
  echo
  echo 'func main() { coremain.Run() }'
} > main.go
log "building coredns $COREDNS_VERSION with $COREDNS_PLUGINS"
go mod tidy >/dev/null 2>&1 || go mod tidy
go build -trimpath -ldflags "-s -w" -o "$out/coredns.tmp" .
mv "$out/coredns.tmp" "$out/coredns"

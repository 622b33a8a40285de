#!/usr/bin/env bash
# Builds CoreDNS (cluster DNS for pod and Service names) from its Go module.
. "$(dirname "$0")/common.sh"
install_go_tool coredns github.com/coredns/coredns "$COREDNS_VERSION"

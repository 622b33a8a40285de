#!/usr/bin/env bash
# Builds Prometheus and promtool from their Go module (the monitoring test scrapes the lab with the first and
# checks and unit-tests the shipped alert rules with the second). Built without the web UI's assets
# (the builtinassets tag): the tests use its HTTP API only.
. "$(dirname "$0")/common.sh"
install_go_tool promtool github.com/prometheus/prometheus/cmd/promtool "$PROMETHEUS_VERSION"
install_go_tool prometheus github.com/prometheus/prometheus/cmd/prometheus "$PROMETHEUS_VERSION"

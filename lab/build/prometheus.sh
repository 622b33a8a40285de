#!/usr/bin/env bash
# Builds Prometheus and promtool from their Go module (the monitoring test scrapes the lab with the first and
# checks and unit-tests the shipped alert rules with the second). Built without the web UI's assets
# (the builtinassets tag): the tests use its HTTP API only. Of the service discoveries, only Kubernetes' (the
# shipped scrape jobs use it) and the built-in file and HTTP ones: Prometheus' own tags leave out the cloud SDKs
# (AWS, Azure, GCE and some twenty more), most of what a cold build compiles beside the first tests.
. "$(dirname "$0")/common.sh"
install_go_tool promtool github.com/prometheus/prometheus/cmd/promtool "$PROMETHEUS_VERSION" "$PROMETHEUS_TAGS"
install_go_tool prometheus github.com/prometheus/prometheus/cmd/prometheus "$PROMETHEUS_VERSION" "$PROMETHEUS_TAGS"

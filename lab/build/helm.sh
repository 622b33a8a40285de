#!/usr/bin/env bash
# Builds Helm from its Go module (Debian packages none); the chart test renders deploy/helm with it.
. "$(dirname "$0")/common.sh"
install_go_tool helm helm.sh/helm/v3/cmd/helm "$HELM_VERSION"

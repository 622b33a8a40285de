#!/usr/bin/env bash
# Builds the checker, the linearizability checker of the histories fault tests record (lab/checker, on porcupine),
# cached by a hash of its sources (common.sh, own_go_bin), so an edited checker is built again.
. "$(dirname "$0")/common.sh"
build_own_go checker checker

#!/usr/bin/env bash
# Builds lab-csi, the lab's own CSI driver for expandable volumes (lab/csi), cached by a hash of its sources
# (common.sh, own_go_bin), so an edited driver is built again.
. "$(dirname "$0")/common.sh"
build_own_go csi lab-csi

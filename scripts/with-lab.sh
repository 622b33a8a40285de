#!/usr/bin/env bash
# Runs a command with the lab up: starts the lab if it is not running, and then stops it again afterwards.
# A lab that was already up is left as it was.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! bash lab/lab.sh status >/dev/null; then
  trap 'bash lab/lab.sh down' EXIT
  bash lab/lab.sh up >/dev/null
fi
"$@"

#!/usr/bin/env bash
# Runs a command with the lab up: starts the lab if it is not running, and then stops it again afterwards.
# A lab that was already up is left as it was. WITH_LAB_EPILOGUE names a command run last of all, even when the
# run is stopped by a signal, so that what it prints ends the output (a CI log shows its tail).
set -euo pipefail
cd "$(dirname "$0")/.."
epilogue() { [ -z "${WITH_LAB_EPILOGUE:-}" ] || bash -c "$WITH_LAB_EPILOGUE" || true; }
if ! bash lab/lab.sh status >/dev/null; then
  trap 'bash lab/lab.sh down; epilogue' EXIT
  bash lab/lab.sh up >/dev/null
else
  trap epilogue EXIT
fi
# A signal ends the run through the EXIT trap.
trap 'exit 143' TERM INT
"$@"

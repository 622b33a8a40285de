#!/usr/bin/env bash
# `npm test`: installs and builds what is missing, and runs every suite in one test-runner invocation (so one
# closing line counts all) with the lab up.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
npm run --silent build
mapfile -t suites < <(find dist/test -name '*.test.js' | sort)
# The operator image (restore steps run it in pods) is packed from this build and imported once the lab is up.
bash scripts/with-lab.sh bash -c 'bash scripts/operator-image.sh >/dev/null && exec node --test --test-concurrency=1 "$@"' suites "${suites[@]}"

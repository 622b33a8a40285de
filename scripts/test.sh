#!/usr/bin/env bash
# `npm test`: installs and builds what is missing, and runs every suite in one test-runner invocation (so one
# closing line counts all) with the lab up.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
npm run --silent build
mapfile -t suites < <(find dist/test -name '*.test.js' | sort)
bash scripts/with-lab.sh node --test --test-concurrency=1 "${suites[@]}"

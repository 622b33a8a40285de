#!/usr/bin/env bash
# `npm test`: installs and builds what is missing, starts the lab unless one is already up (and then stops
# it again at the end), and runs every suite in one test-runner invocation, so one closing line counts all.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
npm run --silent build
if ! bash lab/lab.sh status >/dev/null; then
  trap 'bash lab/lab.sh down' EXIT
  bash lab/lab.sh up >/dev/null
fi
mapfile -t suites < <(find dist/test -name '*.test.js' | sort)
node --test --test-concurrency=1 "${suites[@]}"

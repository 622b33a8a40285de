#!/usr/bin/env bash
# `npm run demo`: installs and builds what is missing, then `etcd-operator demo` (see src/cli/demo.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
npm run --silent build
exec node dist/src/cli/main.js demo

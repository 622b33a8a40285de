#!/usr/bin/env bash
# `npm test`: installs and builds what is missing, and runs the suites of the gate (or, with TEST_SUITE=extended, the others) with the lab up, in two phases:
#   1. every suite that shares the lab fairly (a namespace and an operator of its own), two files at a time
#      (TEST_CONCURRENCY): a lab test under its paced write load keeps the two cores some 75% busy alone; three at
#      a time held them 95-99% busy (load average 42) and an operator's lease renewals went unanswered;
#   2. the suites whose faults reach the whole lab (a node killed or cut off, the API server restarted or
#      black-holed, members starved of CPU), one file at a time, alone on the lab, every fault healed before
#      each. Such a file says so on a line of its own: `// lab: exclusive — <why>`.
# Each test is bounded (TEST_TIMEOUT_MS), so a hang fails its test instead of the whole run's time limit. Both
# phases always run, so one run reports every failure; the exit status is that of the worse. The run's last
# lines (after the lab is stopped) say how long it took and where it was, even when it is stopped by a signal.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
npm run --silent build
# A phase runs its files longest first (test/file-durations.json, from a full run), those that wait for a tool
# built behind a first lab (Prometheus, the CoreOS operator, the CSI resizer, Helm: a line `// lab: late — <why>`)
# after the long ones, the short ones last (test/support/run-files.js). A test that needs what a first lab builds behind it (MinIO, Helm, the CoreOS
# operator, the checker, Prometheus) waits for it (labTool).
# A file that says `// suite: extended — <why>` on a line of its own (the lab's self-tests, scenarios that tests
# of the gate cover too) runs in `npm run test:extended` (TEST_SUITE=extended), not here: CI's 90 minutes on two
# cores hold the rest, not both.
suite_kind=${TEST_SUITE:-gate}
shared=(); exclusive=()
while IFS= read -r suite; do
  if grep -q '^// suite: extended' "$suite"; then [ "$suite_kind" = extended ] || continue
  else [ "$suite_kind" = gate ] || continue; fi
  if grep -q '^// lab: exclusive' "$suite"; then exclusive+=("$suite"); else shared+=("$suite"); fi
done < <(find dist/test -name '*.test.js' | sort)
TEST_LOG=$(mktemp -t npm-test.XXXXXX)
export TEST_LOG TEST_START=$(date +%s)
export WITH_LAB_EPILOGUE='echo "# npm test: $(($(date +%s) - TEST_START)) s; $(grep -c "^ok " "$TEST_LOG") passed, $(grep -c "^not ok " "$TEST_LOG") failed; $(grep "^# phase" "$TEST_LOG" | tr "\n" " ")"; grep "^not ok " "$TEST_LOG" | head -5; rm -f "$TEST_LOG"'
# The operator image (restore steps run it in pods) is packed from this build and imported once the lab is up.
bash scripts/with-lab.sh bash -c '
  # A file counts as a test too: node-loss.test.js runs about 10 min on a busy lab.
  timeout=${TEST_TIMEOUT_MS:-900000}
  bash scripts/operator-image.sh >/dev/null
  phase() { # name concurrency suites...
    local name=$1 concurrency=$2 start=$SECONDS rc=0; shift 2
    node dist/test/support/run-files.js "$concurrency" "$timeout" "$@" | tee -a "$TEST_LOG" || rc=$?
    echo "# phase $name: $# files, $((SECONDS - start)) s, exit $rc" | tee -a "$TEST_LOG"
    return "$rc"
  }
  set -o pipefail
  shared_rc=0; exclusive_rc=0
  # (A suite with no shared file skips the phase.)
  [ "$1" -eq 0 ] || phase shared "${TEST_CONCURRENCY:-2}" "${@:2:$1}" || shared_rc=$?
  # One file at a time, every fault healed before each: a file stopped at its time limit never runs its own
  # heal, and a node or zone left down would fail every file after it.
  for suite in "${@:$(($1 + 2))}"; do
    bash lab/lab.sh heal all >/dev/null 2>&1 || true
    phase "exclusive $(basename "$suite")" 1 "$suite" || exclusive_rc=$?
  done
  # After a failure, the lab as the run left it: a daemon down, a node cordoned or tainted, a fault still in force.
  [ $((shared_rc + exclusive_rc)) -eq 0 ] || bash lab/lab.sh status 2>&1 | grep -v " running (pid" | sed "s/^/# lab after the run: /"
  exit $((shared_rc > exclusive_rc ? shared_rc : exclusive_rc))
' suites "${#shared[@]}" "${shared[@]}" "${exclusive[@]}"

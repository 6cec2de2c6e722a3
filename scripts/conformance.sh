#!/usr/bin/env bash
# Run the official MCP conformance suites against examples/everything.
#
#   bash scripts/conformance.sh [--fail-fast] [--verbose] [RUN...]     (or: make conformance)
#
# Runs (all by default; name some to run only those):
#   stable      @modelcontextprotocol/conformance 0.1.16, --suite all,
#               baseline conformance/baseline-stable.yml
#   2025-11-25  0.2.0-alpha.12, --requirements 2025-11-25,
#               baseline conformance/baseline-2025-11-25.yml
#   2026-07-28  0.2.0-alpha.12, --requirements 2026-07-28,
#               baseline conformance/baseline-2026-07-28.yml. Runs only when the
#               file conformance/run-2026 exists and MCPKIT_CONFORMANCE_2026 is
#               not 0; otherwise it is reported as SKIPPED. The harness does not
#               score the extension scenarios it runs here (tasks-*): this
#               script fails the run on any failing scenario all the same.
#   extensions  0.2.0-alpha.12, every extension scenario (tasks-*, sep-2640-*)
#               one by one (--scenario, the 2026-07-28 wire), baseline
#               conformance/baseline-extensions.yml. A failure, a warning or a
#               skipped check fails it (a skipped skills check means the
#               fixture declares too little), except the checks the harness
#               itself always skips (tasks-status-notifications).
#   client-2025-11-25, client-2026-07-28
#               the client scenarios of 0.2.0-alpha.12 (--requirements of that
#               revision, plus json-schema-2020-12-preservation) against
#               examples/conformance-client, which the harness starts with the
#               URL of its mock server; the `client` lists of the same baseline
#               files apply.
#
# Every run gets a freshly started server on a free 127.0.0.1 port. It prints one
# summary line per run ("conformance <run>: PASS|FAIL|SKIPPED (...)"), keeps the
# harness output in conformance/results/<run>.log (the server's in
# <run>.server.log, per-check JSON under <run>/) and shows the log's tail when a
# run fails. All runs go ahead even if one fails (--fail-fast stops at the first
# failure); the exit status is non-zero if any run failed, which includes a
# baseline entry that now passes (stale: delete it).
#
# Needs go (unless MCPKIT_FIXTURE_CMD is set, see scripts/fixture.sh) and npm;
# Node >= 22 is installed under .tools/ when the machine's node is older.
# Environment: MCPKIT_CONFORMANCE_TIMEOUT (seconds per run, default 900),
# MCPKIT_CONFORMANCE_2026, MCPKIT_FIXTURE_CMD, MCPKIT_FIXTURE_WAIT, MCPKIT_FIXTURE_URL (test
# a server that is already running, see scripts/fixture.sh).
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mcpkit_root="$(cd "$script_dir/.." && pwd)"

stable_version=0.1.16
alpha_version=0.2.0-alpha.12
run_timeout="${MCPKIT_CONFORMANCE_TIMEOUT:-900}"
conf_dir="$mcpkit_root/conformance"
results_dir="$conf_dir/results"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; }

fail_fast=0
verbose=0
selected=()
while (($# > 0)); do
  case "$1" in
    --fail-fast) fail_fast=1 ;;
    --keep-going) fail_fast=0 ;;
    -v | --verbose) verbose=1 ;;
    -h | --help) usage; exit 0 ;;
    stable | 2025-11-25 | 2026-07-28 | extensions | client-2025-11-25 | client-2026-07-28) selected+=("$1") ;;
    *) echo "conformance.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
((${#selected[@]} > 0)) || selected=(stable 2025-11-25 2026-07-28 extensions client-2025-11-25 client-2026-07-28)

wanted() {
  local r
  for r in "${selected[@]}"; do [[ "$r" == "$1" ]] && return 0; done
  return 1
}

# --- tools -------------------------------------------------------------------
if [[ -z "${MCPKIT_FIXTURE_CMD:-}" ]] && ! command -v go >/dev/null 2>&1; then
  echo "conformance.sh: error: 'go' is not installed or not on PATH (needed to build examples/everything)" >&2
  exit 2
fi
# shellcheck source=scripts/node.sh
source "$script_dir/node.sh"
# shellcheck source=scripts/fixture.sh
source "$script_dir/fixture.sh"

# Install one pinned version of the harness into its own folder, once.
install_harness() {
  local dir="$1" version="$2" have
  local pkg_json="$dir/node_modules/@modelcontextprotocol/conformance/package.json"
  have="$(node -p 'require(process.argv[1]).version' "$pkg_json" 2>/dev/null || true)"
  [[ "$have" == "$version" ]] && return 0
  if ! command -v npm >/dev/null 2>&1; then
    echo "conformance.sh: error: 'npm' is not installed or not on PATH (needed to install @modelcontextprotocol/conformance@$version)" >&2
    return 1
  fi
  echo "conformance.sh: installing @modelcontextprotocol/conformance@$version into ${dir#"$mcpkit_root"/}..." >&2
  mkdir -p "$dir"
  [[ -f "$dir/package.json" ]] || printf '{\n  "name": "mcpkit-conformance-harness",\n  "private": true\n}\n' >"$dir/package.json"
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error --save-exact "@modelcontextprotocol/conformance@$version") >&2
  have="$(node -p 'require(process.argv[1]).version' "$pkg_json" 2>/dev/null || true)"
  if [[ "$have" != "$version" ]]; then
    echo "conformance.sh: error: expected conformance $version in $dir, found '${have:-nothing}'" >&2
    return 1
  fi
}

stable_bin="$mcpkit_root/.tools/conformance-stable/node_modules/.bin/conformance"
alpha_bin="$mcpkit_root/.tools/conformance-alpha/node_modules/.bin/conformance"
if wanted stable; then
  install_harness "$mcpkit_root/.tools/conformance-stable" "$stable_version" || exit 2
fi
if wanted 2025-11-25 || wanted 2026-07-28 || wanted extensions || wanted client-2025-11-25 || wanted client-2026-07-28; then
  install_harness "$mcpkit_root/.tools/conformance-alpha" "$alpha_version" || exit 2
fi

if wanted stable || wanted 2025-11-25 || wanted 2026-07-28 || wanted extensions; then
  fixture_build || exit 2
fi
client_bin="$mcpkit_root/bin/conformance-client"
if wanted client-2025-11-25 || wanted client-2026-07-28; then
  echo "conformance.sh: go build -o bin/conformance-client ./examples/conformance-client" >&2
  (cd "$mcpkit_root" && go build -o bin/conformance-client ./examples/conformance-client) || exit 2
fi
trap fixture_stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$results_dir"

# --- one run -----------------------------------------------------------------
failures=0

# The harness colours its output even into a file; keep logs plain.
strip_ansi() { sed -u -e 's/\x1b\[[0-9;]*[A-Za-z]//g'; }

# baseline_names HEADING < LOG: the names the harness lists under a heading
# such as "Unexpected failures (not in baseline):", space-separated, at most 6
# of them and then "+N more".
baseline_names() {
  awk -v heading="$1" '
    index($0, heading) == 1 { on = 1; next }
    on && /^  +[^ ]+ [^ ]/ {
      sub(/^ +[^ ]+ /, "")
      n++
      if (n <= 6) out = out (n > 1 ? " " : "") $0
      next
    }
    { on = 0 }
    END { if (n > 6) out = out " +" (n - 6) " more"; printf "%s", out }'
}

# summarize NAME RC LOG: print the run's one summary line.
summarize() {
  local name="$1" rc="$2" log="$3" plain total status detail="" list
  plain="$(cat "$log" 2>/dev/null || true)"
  total="$(grep -E '^Total: ' <<<"$plain" | tail -n 1 || true)"
  total="${total#Total: }"
  if ((rc == 0)); then status=PASS; else status=FAIL; fi
  if ((rc == 124 || rc == 137)); then
    detail="timed out after ${run_timeout}s"
  elif [[ -z "$total" ]]; then
    detail="no summary from the harness, exit $rc"
  else
    detail="$total"
  fi
  list="$(baseline_names "Unexpected failures" <<<"$plain")"
  [[ -n "$list" ]] && detail+="; unexpected: $list"
  list="$(baseline_names "Stale baseline entries" <<<"$plain")"
  [[ -n "$list" ]] && detail+="; stale baseline entries: $list"
  list="$(grep -E -m1 '^(Server test error: |error: )' <<<"$plain" || true)"
  [[ -n "$list" ]] && detail+="; ${list:0:160}"
  if ((rc == 0)) && grep -q '^Expected failures (in baseline)' <<<"$plain"; then
    detail+="; remaining failures are in the baseline"
  fi
  echo "conformance $name: $status ($detail)"
}

# run_suite NAME HARNESS_BIN ARGS...: start the server, run the harness, report.
run_suite() {
  local name="$1" bin="$2" rc=0
  shift 2
  local log="$results_dir/$name.log" out="$results_dir/$name"
  rm -rf "$out" "$log"
  if ! fixture_start_http "$results_dir/$name.server.log"; then
    fixture_stop
    echo "conformance $name: FAIL (the fixture server did not start; see conformance/results/$name.server.log)"
    return 1
  fi
  {
    echo "# conformance run '$name' against $fixture_url"
    echo "# harness $("$bin" --version 2>/dev/null || true): conformance server --url $fixture_url $* -o $out"
  } >"$log"
  local cmd=(timeout --foreground --kill-after=10 "$run_timeout" "$bin" server --url "$fixture_url" "$@" -o "$out")
  if ((verbose)); then
    "${cmd[@]}" 2>&1 | strip_ansi | tee -a "$log" >&2 || rc=$?
  else
    "${cmd[@]}" 2>&1 | strip_ansi >>"$log" || rc=$?
  fi
  fixture_stop
  summarize "$name" "$rc" "$log"
  if ((rc != 0)); then
    echo "  --- last lines of conformance/results/$name.log ---"
    tail -n 40 "$log" | sed -e 's/^/  | /'
    return 1
  fi
}

# run_client NAME REVISION: the client scenarios a revision requires, then the not-required
# json-schema-2020-12-preservation scenario, in one log.
run_client() {
  local name="$1" revision="$2" rc=0 rc2=0
  local log="$results_dir/$name.log" out="$results_dir/$name"
  rm -rf "$out" "$log"
  {
    echo "# conformance run '$name': conformance client --command $client_bin --requirements $revision"
  } >"$log"
  local cmd=(timeout --foreground --kill-after=10 "$run_timeout" "$alpha_bin" client --command "$client_bin"
    --requirements "$revision" --expected-failures "$conf_dir/baseline-$revision.yml" -o "$out")
  if ((verbose)); then
    "${cmd[@]}" 2>&1 | strip_ansi | tee -a "$log" >&2 || rc=$?
  else
    "${cmd[@]}" 2>&1 | strip_ansi >>"$log" || rc=$?
  fi
  # Not required by either revision, so --requirements leaves it out; run it on its own.
  local extra="$results_dir/$name.preservation.log"
  timeout --foreground --kill-after=10 "$run_timeout" "$alpha_bin" client --command "$client_bin" \
    --scenario json-schema-2020-12-preservation --spec-version "$revision" -o "$out" 2>&1 | strip_ansi >"$extra" || rc2=$?
  summarize "$name" "$rc" "$log"
  local unscored
  unscored="$(unscored_failures "$log" "$conf_dir/baseline-$revision.yml")"
  if ((rc == 0)) && [[ -n "$unscored" ]]; then
    echo "conformance $name: FAIL (scenarios the harness does not score failed: $unscored)"
    return 1
  fi
  if ((rc2 != 0)); then
    echo "conformance $name: FAIL (json-schema-2020-12-preservation; see conformance/results/$name.preservation.log)"
    tail -n 20 "$extra" | sed -e 's/^/  | /'
    return 1
  fi
  if ((rc != 0)); then
    echo "  --- last lines of conformance/results/$name.log ---"
    tail -n 40 "$log" | sed -e 's/^/  | /'
    return 1
  fi
}

# unscored_failures LOG: the scenarios the SUMMARY of LOG marks failed (✗), space-separated,
# less those the baseline file $2 lists as a whole scenario. The harness leaves the extension
# scenarios of a --requirements run out of its exit status; this script does not.
unscored_failures() {
  local name out=""
  while IFS= read -r name; do
    grep -qxE "[[:space:]]*- ${name}[[:space:]]*(#.*)?" "$2" 2>/dev/null && continue
    out+="${out:+ }$name"
  done < <(sed -n -e 's/^✗ \([^:]*\): .*/\1/p' "$1")
  printf '%s' "$out"
}

# Extension scenarios, one by one. The harness always skips the checks of these (its own
# pending rewrite), so a skip there is not the fixture's doing.
harness_skips=" tasks-status-notifications "

# run_extensions HARNESS_BIN: every extension scenario against one fixture server.
run_extensions() {
  local bin="$1" name="extensions" rc=0 scenario slog out passed=0 failed=0 listed=0 bad=()
  local log="$results_dir/$name.log" baseline="$conf_dir/baseline-extensions.yml"
  out="$results_dir/$name"
  rm -rf "$out" "$log"
  mkdir -p "$out"
  local scenarios
  scenarios="$("$bin" list --server 2>/dev/null | sed -n -e 's/^  - \([^ ]*\) \[extension\]$/\1/p')"
  if [[ -z "$scenarios" ]]; then
    echo "conformance $name: FAIL (the harness lists no extension scenarios)"
    return 1
  fi
  if ! fixture_start_http "$results_dir/$name.server.log"; then
    fixture_stop
    echo "conformance $name: FAIL (the fixture server did not start; see conformance/results/$name.server.log)"
    return 1
  fi
  echo "# conformance run '$name' against $fixture_url" >"$log"
  for scenario in $scenarios; do
    slog="$out/$scenario.log"
    rc=0
    timeout --foreground --kill-after=10 "$run_timeout" "$bin" server --url "$fixture_url" \
      --scenario "$scenario" --expected-failures "$baseline" -o "$out" 2>&1 | strip_ansi >"$slog" || rc=$?
    { echo "=== $scenario (exit $rc) ==="; cat "$slog"; } >>"$log"
    local skipped=0 warned=0
    skipped="$(grep -cE '\] SKIPPED ' "$slog" || true)"
    warned="$(grep -cE '\] WARNING ' "$slog" || true)"
    if [[ "$harness_skips" == *" $scenario "* ]]; then skipped=0; fi
    if grep -qxE "[[:space:]]*- ${scenario}[[:space:]]*(#.*)?" "$baseline"; then
      listed=$((listed + 1))
    elif ((rc != 0 || skipped > 0 || warned > 0)); then
      failed=$((failed + 1))
      bad+=("$scenario(exit $rc, $warned warning(s), $skipped skipped)")
    else
      passed=$((passed + 1))
    fi
  done
  fixture_stop
  if ((failed > 0)); then
    echo "conformance $name: FAIL ($passed scenarios passed, $failed failed: ${bad[*]})"
    grep -hE '\] (FAILURE|WARNING|SKIPPED) ' "$out"/*.log | head -n 40 | sed -e 's/^/  | /'
    return 1
  fi
  local note=""
  ((listed > 0)) && note="; $listed scenario(s) listed whole in the baseline"
  echo "conformance $name: PASS ($passed scenarios with no failure, warning or skipped check$note)"
}

maybe_stop() {
  failures=$((failures + 1))
  if ((fail_fast)); then
    echo "conformance.sh: stopping after the first failure (--fail-fast)" >&2
    exit 1
  fi
}

if wanted stable; then
  run_suite "stable-$stable_version" "$stable_bin" \
    --suite all --expected-failures "$conf_dir/baseline-stable.yml" || maybe_stop
fi

if wanted 2025-11-25; then
  run_suite "alpha-2025-11-25" "$alpha_bin" \
    --requirements 2025-11-25 --expected-failures "$conf_dir/baseline-2025-11-25.yml" || maybe_stop
fi

if wanted 2026-07-28; then
  if [[ "${MCPKIT_CONFORMANCE_2026:-}" == "0" ]]; then
    echo "conformance alpha-2026-07-28: SKIPPED (MCPKIT_CONFORMANCE_2026=0)"
  elif [[ ! -e "$conf_dir/run-2026" ]]; then
    echo "conformance alpha-2026-07-28: SKIPPED (conformance/run-2026 not present: the 2026-07-28 lifecycle is not enabled yet)"
  else
    if run_suite "alpha-2026-07-28" "$alpha_bin" \
      --requirements 2026-07-28 --expected-failures "$conf_dir/baseline-2026-07-28.yml"; then
      unscored="$(unscored_failures "$results_dir/alpha-2026-07-28.log" "$conf_dir/baseline-2026-07-28.yml")"
      if [[ -n "$unscored" ]]; then
        echo "conformance alpha-2026-07-28: FAIL (scenarios the harness does not score failed: $unscored)"
        maybe_stop
      fi
    else
      maybe_stop
    fi
  fi
fi

if wanted client-2025-11-25; then
  run_client client-2025-11-25 2025-11-25 || maybe_stop
fi

if wanted client-2026-07-28; then
  run_client client-2026-07-28 2026-07-28 || maybe_stop
fi

if wanted extensions; then
  run_extensions "$alpha_bin" || maybe_stop
fi

if ((failures > 0)); then
  echo "conformance.sh: $failures run(s) failed; logs in conformance/results/" >&2
  exit 1
fi

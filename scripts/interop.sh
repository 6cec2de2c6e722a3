#!/usr/bin/env bash
# Interop check: the official MCP TypeScript SDK client (interop/client.mjs), and the
# go-sdk and mcp-go clients in both lifecycles (interop/goclients, a Go module of its own),
# against examples/everything, over Streamable HTTP and over stdio.
#
#   bash scripts/interop.sh                 (or: make interop)
#   bash scripts/interop.sh --update-lock   regenerate interop/package-lock.json
#
# Installs interop/'s pinned dependencies (npm ci, skipped when up to date),
# builds bin/everything, starts it on a free 127.0.0.1 port and runs
#   node interop/client.mjs http  http://127.0.0.1:PORT/mcp
#   node interop/client.mjs stdio <repo>/bin/everything -stdio
# The HTTP server is always stopped on exit. Exits non-zero if either fails.
#
# Needs go (unless MCPKIT_FIXTURE_CMD is set, see scripts/fixture.sh), npm and
# Node >= 18 (the SDK's minimum; an older or missing node gets the Node 22 of
# scripts/node.sh). Environment: MCPKIT_INTEROP_TIMEOUT_MS (per client run,
# default 60000), MCPKIT_FIXTURE_CMD, MCPKIT_FIXTURE_WAIT.
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mcpkit_root="$(cd "$script_dir/.." && pwd)"
interop_dir="$mcpkit_root/interop"

update_lock=0
case "${1:-}" in
  "") ;;
  --update-lock) update_lock=1 ;;
  -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "interop.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac

# --- tools -------------------------------------------------------------------
if [[ -z "${MCPKIT_FIXTURE_CMD:-}" ]] && ! command -v go >/dev/null 2>&1; then
  echo "interop.sh: error: 'go' is not installed or not on PATH (needed to build examples/everything)" >&2
  exit 2
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "interop.sh: error: 'npm' is not installed or not on PATH (needed to install interop/'s dependencies)" >&2
  exit 2
fi
node_major="$(node --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/' || true)"
if [[ ! "$node_major" =~ ^[0-9]+$ ]] || ((node_major < 18)); then
  # shellcheck source=scripts/node.sh
  source "$script_dir/node.sh"
fi
# shellcheck source=scripts/fixture.sh
source "$script_dir/fixture.sh"

# --- dependencies --------------------------------------------------------------
# The lock file is written without "resolved" URLs (only versions and
# integrity hashes), so it names no registry: npm ci fetches from whichever
# registry the machine's npm is configured for.
npm_flags=(--no-audit --no-fund --loglevel=error)
lock_flags=(--lockfile-version 3 --omit-lockfile-registry-resolved --save-exact)
if ((update_lock)); then
  echo "interop.sh: regenerating interop/package-lock.json" >&2
  rm -rf "$interop_dir/node_modules" "$interop_dir/package-lock.json"
  (cd "$interop_dir" && npm install "${npm_flags[@]}" "${lock_flags[@]}") >&2
elif [[ ! -f "$interop_dir/package-lock.json" ]]; then
  echo "interop.sh: interop/package-lock.json is missing; creating it (commit it)" >&2
  (cd "$interop_dir" && npm install "${npm_flags[@]}" "${lock_flags[@]}") >&2
elif [[ ! -f "$interop_dir/node_modules/.package-lock.json" ||
  "$interop_dir/package-lock.json" -nt "$interop_dir/node_modules/.package-lock.json" ||
  "$interop_dir/package.json" -nt "$interop_dir/node_modules/.package-lock.json" ]]; then
  echo "interop.sh: npm ci in interop/" >&2
  (cd "$interop_dir" && npm ci "${npm_flags[@]}") >&2
fi

# --- runs ----------------------------------------------------------------------
fixture_build || exit 2
work="$(mktemp -d)"
cleanup() {
  fixture_stop
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

client_timeout=$((${MCPKIT_INTEROP_TIMEOUT_MS:-60000} / 1000 + 30))
passed=0
failed=0

run_client() { # run_client LABEL ARGS...: run client.mjs under a hard timeout
  local label="$1" rc=0
  shift
  echo "--- interop over $label" >&2
  timeout --foreground --kill-after=5 "$client_timeout" node "$interop_dir/client.mjs" "$@" || rc=$?
  if ((rc == 0)); then
    passed=$((passed + 1))
  else
    ((rc == 124 || rc == 137)) && echo "interop.sh: the $label client was killed after ${client_timeout}s" >&2
    failed=$((failed + 1))
    return 1
  fi
}

# The go-sdk and mcp-go clients (interop/goclients, a module of its own so the kit's module
# never depends on them), each in both lifecycles, over both transports.
goclients="$mcpkit_root/bin/goclients"
if [[ -z "${MCPKIT_FIXTURE_CMD:-}" ]] || command -v go >/dev/null 2>&1; then
  (cd "$interop_dir/goclients" && go build -o "$goclients" .) || { echo "interop.sh: building interop/goclients failed" >&2; exit 2; }
fi
run_go() { # run_go LABEL ARGS...: run goclients under a hard timeout, show its failures
  local label="$1" rc=0
  shift
  echo "--- interop: $label" >&2
  timeout --foreground --kill-after=5 "$client_timeout" "$goclients" "$@" >"$work/go.out" 2>&1 || rc=$?
  grep -v '^PASS ' "$work/go.out" | grep -v ' INFO ' >&2 || true
  if ((rc == 0)); then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
}

if fixture_start_http "$work/server-http.log"; then
  if ! run_client http http "$fixture_url"; then
    echo "  --- last lines of the HTTP server's output ---" >&2
    tail -n 30 "$work/server-http.log" | sed 's/^/  | /' >&2
  fi
  for c in gosdk mcpgo; do
    for lc in legacy modern; do
      run_go "$c $lc http" "$c" "$lc" http "$fixture_url"
    done
  done
else
  failed=$((failed + 1))
fi
fixture_stop

run_client stdio stdio "${fixture_cmd[@]}" -stdio || true
for c in gosdk mcpgo; do
  for lc in legacy modern; do
    run_go "$c $lc stdio" "$c" "$lc" stdio "${fixture_cmd[@]}" -stdio
  done
done

echo "interop: $passed passed, $failed failed"
((failed == 0))

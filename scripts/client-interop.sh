#!/usr/bin/env bash
# Interop check of the kit's Go client (package client, driven by interop/goclient):
#   * against examples/everything over stdio and Streamable HTTP, in the legacy,
#     2026-07-28 and Auto lifecycles (the in-memory transport is covered by the
#     tests of examples/everything, in make test);
#   * against the official TypeScript reference server
#     (@modelcontextprotocol/server-everything, pinned in interop/ts-server) over
#     stdio and Streamable HTTP, in Auto (which must fall back to initialize: the
#     server is legacy-only) and legacy.
#
#   bash scripts/client-interop.sh     (make interop runs it after scripts/interop.sh)
#
# Prints one line per run ("client-interop <server>/<transport>/<lifecycle>: PASS|FAIL")
# and exits non-zero if any failed. Needs go, npm and Node >= 18 (an older or
# missing node gets the Node 22 of scripts/node.sh).
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mcpkit_root="$(cd "$script_dir/.." && pwd)"
ts_dir="$mcpkit_root/interop/ts-server"

for tool in go npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "client-interop.sh: error: '$tool' is not installed or not on PATH" >&2
    exit 2
  fi
done
node_major="$(node --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/' || true)"
if [[ ! "$node_major" =~ ^[0-9]+$ ]] || ((node_major < 18)); then
  # shellcheck source=scripts/node.sh
  source "$script_dir/node.sh"
fi
# shellcheck source=scripts/fixture.sh
source "$script_dir/fixture.sh"

# The lock names no registry (no "resolved" URLs), as in interop/.
if [[ ! -f "$ts_dir/node_modules/.package-lock.json" ||
  "$ts_dir/package-lock.json" -nt "$ts_dir/node_modules/.package-lock.json" ]]; then
  echo "client-interop.sh: npm ci in interop/ts-server" >&2
  (cd "$ts_dir" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi
ts_server="$ts_dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

fixture_build || exit 2
(cd "$mcpkit_root" && go build -o bin/goclient ./interop/goclient) || exit 2
goclient="$mcpkit_root/bin/goclient"

work="$(mktemp -d)"
ts_pid=""
cleanup() {
  fixture_stop
  if [[ -n "$ts_pid" ]] && kill -0 "$ts_pid" 2>/dev/null; then
    kill -TERM "$ts_pid" 2>/dev/null || true
    wait "$ts_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

failures=0
# one NAME ARGS...: run goclient, print the summary line (and its output on failure).
one() {
  local name="$1" rc=0
  shift
  timeout --kill-after=5 90 "$goclient" "$@" >"$work/out" 2>"$work/err" || rc=$?
  if ((rc == 0)); then
    echo "client-interop $name: PASS ($(tail -n 1 "$work/out" | sed 's/^goclient: //'))"
  else
    failures=$((failures + 1))
    echo "client-interop $name: FAIL (exit $rc)"
    sed -e 's/^/  | /' "$work/out" "$work/err" | tail -n 30
  fi
}

for lc in legacy modern auto; do
  one "kit/stdio/$lc" -target kit -lifecycle "$lc" -stdio "${fixture_cmd[@]}" -stdio
done
if fixture_start_http "$work/kit-http.log"; then
  for lc in legacy modern auto; do
    one "kit/http/$lc" -target kit -lifecycle "$lc" -http "$fixture_url"
  done
  fixture_stop
else
  failures=$((failures + 1))
  echo "client-interop kit/http: FAIL (examples/everything did not start)"
fi

for lc in auto legacy; do
  one "ts/stdio/$lc" -target ts -lifecycle "$lc" -stdio node "$ts_server" stdio
done
port="$(fixture_free_port)"
PORT="$port" node "$ts_server" streamableHttp >"$work/ts-http.log" 2>&1 </dev/null &
ts_pid=$!
deadline=$((SECONDS + 20))
until fixture_http_answers "http://127.0.0.1:$port/mcp"; do
  if ! kill -0 "$ts_pid" 2>/dev/null || ((SECONDS >= deadline)); then
    echo "client-interop ts/http: FAIL (the TypeScript server did not start)"
    tail -n 20 "$work/ts-http.log" | sed -e 's/^/  | /'
    exit 1
  fi
  sleep 0.2
done
for lc in auto legacy; do
  one "ts/http/$lc" -target ts -lifecycle "$lc" -http "http://127.0.0.1:$port/mcp"
done

if ((failures > 0)); then
  echo "client-interop.sh: $failures run(s) failed" >&2
  exit 1
fi

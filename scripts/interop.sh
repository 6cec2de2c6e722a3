#!/usr/bin/env bash
# Interop check against examples/everything, over Streamable HTTP and over stdio, with five
# clients the kit's authors did not write: the TypeScript SDK 1.x client (interop/client.mjs,
# the legacy lifecycle, the only one it speaks), and in both lifecycles the TypeScript SDK v2
# client (interop/v2/client.mjs), the go-sdk and mcp-go clients (interop/goclients, a Go module
# of its own) and the MCP Inspector CLI (interop/v2, --cli). The checks every client shares
# (input_required rounds, elicitation, roots) are in interop/common.mjs and
# interop/goclients/main.go.
#
#   bash scripts/interop.sh                 (or: make interop)
#   bash scripts/interop.sh --update-lock   regenerate interop/package-lock.json
#
# Installs interop/'s and interop/v2's pinned dependencies (npm ci, skipped when up to date),
# builds bin/everything and bin/goclients, starts the fixture on a free 127.0.0.1 port and runs
# every client against it, then every client over stdio (each starting its own
# bin/everything -stdio). The HTTP server is always stopped on exit. Exits non-zero if one
# client run fails.
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

# interop/v2: the TypeScript SDK v2 client and the MCP Inspector CLI (Node >= 20), pinned in
# a lock file of their own, installed the same way. npm ci refuses a lock file that lacks an
# entry for one of the optional packages of another platform ("Missing ... from lock file"); an
# earlier lock lacked vite's Windows-only napi-windows-process-start-time. After --update-lock,
# check that the new lock still lists it.
v2_dir="$interop_dir/v2"
if ((update_lock)) || [[ ! -f "$v2_dir/package-lock.json" ]]; then
  rm -rf "$v2_dir/node_modules" "$v2_dir/package-lock.json"
  (cd "$v2_dir" && npm install "${npm_flags[@]}" "${lock_flags[@]}") >&2
elif [[ ! -f "$v2_dir/node_modules/.package-lock.json" ||
  "$v2_dir/package-lock.json" -nt "$v2_dir/node_modules/.package-lock.json" ||
  "$v2_dir/package.json" -nt "$v2_dir/node_modules/.package-lock.json" ]]; then
  echo "interop.sh: npm ci in interop/v2/" >&2
  (cd "$v2_dir" && npm ci "${npm_flags[@]}") >&2
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
run_v2() { # run_v2 LABEL LIFECYCLE ARGS...: the TypeScript SDK v2 client
  local label="$1" rc=0
  shift
  echo "--- interop: $label" >&2
  timeout --foreground --kill-after=5 "$client_timeout" node "$v2_dir/client.mjs" "$@" >"$work/v2.out" 2>&1 || rc=$?
  grep -v '^ok - ' "$work/v2.out" >&2 || true
  if ((rc == 0)); then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}
inspect() { # inspect OUT OUTCOME WANT ARGS...: one Inspector CLI call whose output (kept in OUT) must contain WANT
  local out="$1" outcome="$2" want="$3" rc=0
  shift 3
  HOME="${out%.out}-home" timeout --kill-after=5 60 \
    "$v2_dir/node_modules/.bin/mcp-inspector" --cli "$@" >"$out" 2>&1 || rc=$?
  grep -qF -- "$want" "$out" || return 1
  case "$outcome" in
    # The call must be refused (an error envelope, non-zero exit).
    fails) ((rc != 0)) ;;
    # Inspector quirk: a tool result with isError: true makes the CLI exit 1 (printing the
    # result, then a tool_is_error line), so that call is judged by its output alone.
    *) ((rc == 0)) || grep -qF '"code":"tool_is_error"' "$out" ;;
  esac
}
# The Inspector CLI 2.12.0 (--cli) in both eras (--protocol-era legacy: initialize at 2025-11-25;
# modern: server/discover, 2026-07-28), from a session config (--config) that declares one root.
# Its quirks, checked or noted here: it declares neither elicitation nor sampling (it cannot
# answer them without a user), so the server must ask a CLI client for neither and refuse the
# tools that need them; it answers roots/list (legacy) and embedded roots/list input requests
# (2026-07-28) from the config's roots; it has no completion, subscription, progress or
# cancellation methods; it refuses logging/setLevel itself on 2026-07-28.
inspector_checks=(
  # ERAS|OUTCOME|WANT|ARGS...
  'both|ok|interop_slow|--method|tools/list'
  'both|ok|This is a simple text response|--method|tools/call|--tool-name|test_simple_text'
  'both|ok|"isError": true|--method|tools/call|--tool-name|test_error_handling'
  'both|ok|eu-west|--method|tools/call|--tool-name|test_custom_headers|--tool-arg|region=eu-west'
  'both|ok|static text resource|--method|resources/read|--uri|test://static-text'
  'both|ok|test://watched-resource|--method|resources/list'
  'both|ok|test://template/{id}/data|--method|resources/templates/list'
  'both|ok|test_prompt_with_arguments|--method|prompts/list'
  "both|ok|arg1='a', arg2='b'|--method|prompts/get|--prompt-name|test_prompt_with_arguments|--prompt-args|arg1=a|arg2=b"
  'both|ok|Found 1 root(s)|--method|tools/call|--tool-name|test_input_required_result_list_roots'
  'both|ok|No supported capabilities declared|--method|tools/call|--tool-name|test_input_required_result_capabilities'
  'legacy|fails|input_required requires client capabilities the client did not declare: {\"elicitation\":{\"form\":{}}}|--method|tools/call|--tool-name|test_input_required_result_elicitation'
  'modern|fails|Missing required client capability|--method|tools/call|--tool-name|test_input_required_result_elicitation'
  'legacy|ok|Client does not support sampling|--method|tools/call|--tool-name|test_sampling|--tool-arg|prompt=hi'
  'legacy|ok|{}|--method|logging/setLevel|--log-level|debug'
)
run_inspector() { # run_inspector ERA TRANSPORT: the Inspector CLI's methods against the fixture; fails if one does
  local era="$1" transport="$2" ok=0 bad=0 c out="$work/insp-$1-$2.out"
  for c in "${inspector_checks[@]}"; do
    IFS='|' read -r -a parts <<<"$c"
    [[ "${parts[0]}" == both || "${parts[0]}" == "$era" ]] || continue
    if inspect "$out" "${parts[1]}" "${parts[2]}" --config "$work/inspector.json" --server "$transport" --protocol-era "$era" "${parts[@]:3}"; then
      ok=$((ok + 1))
    else
      bad=$((bad + 1))
      echo "  not ok - inspector $era $transport ${parts[*]:3}:"
      tail -n 5 "$out" | sed 's/^/  | /'
    fi
  done
  echo "interop inspector/$era/$transport: $ok passed, $bad failed"
  ((bad == 0))
}
run_inspectors() { # run_inspectors TRANSPORT: both eras at once (each call is a process start), reported in order
  local transport="$1" lc
  local -A pids=()
  for lc in legacy modern; do
    run_inspector "$lc" "$transport" >"$work/inspector-$lc.log" 2>&1 &
    pids[$lc]=$!
  done
  for lc in legacy modern; do
    echo "--- interop: inspector $lc $transport" >&2
    if wait "${pids[$lc]}"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
    cat "$work/inspector-$lc.log" >&2
  done
}
inspector_config() { # inspector_config: the session config of both transports (HTTP at $fixture_url)
  node -e '
    const [url, ...cmd] = process.argv.slice(1);
    const roots = [{ uri: "file:///interop/first", name: "first" }];
    console.log(JSON.stringify({ mcpServers: {
      http: { type: "streamable-http", url, roots },
      stdio: { command: cmd[0], args: cmd.slice(1), roots },
    } }));' "${fixture_url:-http://127.0.0.1:1/mcp}" "${fixture_cmd[@]}" -stdio >"$work/inspector.json"
}
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
  for lc in legacy modern; do
    run_v2 "ts-v2 $lc http" "$lc" http "$fixture_url"
  done
  inspector_config
  run_inspectors http
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
for lc in legacy modern; do
  run_v2 "ts-v2 $lc stdio" "$lc" stdio "${fixture_cmd[@]}" -stdio
done
inspector_config
run_inspectors stdio

echo "interop: $passed passed, $failed failed"
((failed == 0))

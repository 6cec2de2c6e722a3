# shellcheck shell=bash
# Helpers shared by conformance.sh and interop.sh (source it; needs a node on
# PATH for the free-port lookup):
#
#   fixture_build                 build bin/everything (or take MCPKIT_FIXTURE_CMD)
#   fixture_start_http LOGFILE    start it on a free 127.0.0.1 port, wait until it
#                                 answers HTTP; sets fixture_url and fixture_pid
#   fixture_stop                  SIGTERM it (SIGKILL after a grace period); safe
#                                 to call more than once, meant for an EXIT trap
#
# The fixture contract (examples/everything):
#   <cmd> -http 127.0.0.1:PORT   Streamable HTTP at http://127.0.0.1:PORT/mcp
#   <cmd> -stdio                 newline-delimited JSON-RPC on stdin/stdout
#
# Environment:
#   MCPKIT_FIXTURE_CMD   run this command line instead of building
#                        examples/everything (split on spaces; the flags above are
#                        appended). For trying the scripts against another server.
#   MCPKIT_FIXTURE_WAIT  seconds to wait for the server to answer (default 15).
#   MCPKIT_FIXTURE_URL   use the server already serving at this URL (for example several
#                        replicas behind a proxy, see cluster.sh): nothing is built, started
#                        or stopped.

mcpkit_root="${mcpkit_root:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
fixture_cmd=()
fixture_pid=""
fixture_url=""
fixture_log=""

fixture_build() {
  if [[ -n "${MCPKIT_FIXTURE_URL:-}" ]]; then
    echo "fixture: using the server at MCPKIT_FIXTURE_URL ($MCPKIT_FIXTURE_URL)" >&2
    return 0
  fi
  if [[ -n "${MCPKIT_FIXTURE_CMD:-}" ]]; then
    read -r -a fixture_cmd <<<"$MCPKIT_FIXTURE_CMD"
    echo "fixture: using MCPKIT_FIXTURE_CMD ($MCPKIT_FIXTURE_CMD); not building examples/everything" >&2
    return 0
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "fixture: error: 'go' is not installed or not on PATH; it is needed to build examples/everything" >&2
    return 1
  fi
  if [[ ! -d "$mcpkit_root/examples/everything" ]]; then
    echo "fixture: error: examples/everything does not exist in this checkout; nothing to test" >&2
    return 1
  fi
  echo "fixture: go build -o bin/everything ./examples/everything" >&2
  if ! (cd "$mcpkit_root" && go build -o bin/everything ./examples/everything); then
    echo "fixture: error: building examples/everything failed" >&2
    return 1
  fi
  fixture_cmd=("$mcpkit_root/bin/everything")
}

# Print a TCP port that is free on 127.0.0.1 right now (the OS picks it).
fixture_free_port() {
  node -e '
    const srv = require("net").createServer();
    srv.on("error", (e) => { console.error(e.message); process.exit(1); });
    srv.listen(0, "127.0.0.1", () => {
      process.stdout.write(String(srv.address().port));
      srv.close();
    });'
}

# Succeed when something answers HTTP at $1 (any status code counts).
fixture_http_answers() {
  local code
  if command -v curl >/dev/null 2>&1; then
    # A GET may open an SSE stream that never ends: --max-time cuts it, and
    # the status code is still reported.
    code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$1" 2>/dev/null || true)"
    [[ -n "$code" && "$code" != "000" ]]
  else
    node -e '
      fetch(process.argv[1], { signal: AbortSignal.timeout(2000) })
        .then(() => process.exit(0), () => process.exit(1));' "$1"
  fi
}

fixture_start_http() {
  local port deadline
  fixture_log="$1"
  if [[ -n "${MCPKIT_FIXTURE_URL:-}" ]]; then
    fixture_url="$MCPKIT_FIXTURE_URL"
    return 0
  fi
  ((${#fixture_cmd[@]} > 0)) || { echo "fixture: error: fixture_build was not run" >&2; return 1; }
  port="$(fixture_free_port)" || { echo "fixture: error: could not find a free port" >&2; return 1; }
  fixture_url="http://127.0.0.1:$port/mcp"
  mkdir -p "$(dirname "$fixture_log")"
  "${fixture_cmd[@]}" -http "127.0.0.1:$port" >"$fixture_log" 2>&1 </dev/null &
  fixture_pid=$!
  deadline=$((SECONDS + ${MCPKIT_FIXTURE_WAIT:-15}))
  until fixture_http_answers "$fixture_url"; do
    if ! kill -0 "$fixture_pid" 2>/dev/null; then
      echo "fixture: error: the server exited before answering on $fixture_url; its output:" >&2
      tail -n 30 "$fixture_log" >&2 || true
      fixture_pid=""
      return 1
    fi
    if ((SECONDS >= deadline)); then
      echo "fixture: error: no HTTP answer on $fixture_url within ${MCPKIT_FIXTURE_WAIT:-15}s; its output:" >&2
      tail -n 30 "$fixture_log" >&2 || true
      return 1
    fi
    sleep 0.2
  done
  echo "fixture: serving on $fixture_url (pid $fixture_pid)" >&2
}

fixture_stop() {
  local pid=$fixture_pid i
  [[ -n "$pid" ]] || return 0
  fixture_pid=""
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "fixture: server (pid $pid) ignored SIGTERM for 5s; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  wait "$pid" 2>/dev/null || true
}

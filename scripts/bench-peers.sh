#!/usr/bin/env bash
# Side-by-side benchmark: the same echo tool served by a bare net/http + encoding/json handler,
# mcpkit, go-sdk and mcp-go (module bench/), loaded with wrk over loopback for several
# alternating rounds, the server pinned to one core and wrk to another. Prints req/s, p50, p99
# and the ratio to bare per round, then the in-process ns/B/allocs per request.
#
# Knobs (environment): ROUNDS (3), DURATION (wrk -d, 5s), CONNECTIONS (wrk -c, 32),
# SERVER_CPU (0), CLIENT_CPU (1), WORKLOADS ("stateless modern session"), BENCHTIME (go test
# -benchtime for the in-process figures, 2s). Needs wrk (Debian package wrk) and taskset
# (util-linux). Everything listens on 127.0.0.1 and every server started is stopped by its PID.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5s}
CONNECTIONS=${CONNECTIONS:-32}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
WORKLOADS=${WORKLOADS:-stateless modern session}
BENCHTIME=${BENCHTIME:-2s}
IMPLS=(bare mcpkit go-sdk mcp-go)

for tool in wrk taskset; do
	command -v "$tool" >/dev/null 2>&1 || { echo "bench-peers: $tool is missing (apt-get install ${tool/taskset/util-linux})" >&2; exit 1; }
done

work=$(mktemp -d)
server_pid=
cleanup() {
	if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

(cd bench && go build -o "$work/peer" ./cmd/peer)

# supports IMPL WORKLOAD: the peers speak only the 2025-11-25 lifecycle.
supports() { [[ $2 != modern || $1 == bare || $1 == mcpkit ]]; }

# body WORKLOAD: the tools/call body (the same text as bench/peers.Body).
body() {
	if [[ $1 == modern ]]; then
		printf '%s' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}}}}'
	else
		printf '%s' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}'
	fi
}

# run IMPL WORKLOAD: start the server on SERVER_CPU, load it from CLIENT_CPU, print
# "req/s p50 p99" (latencies in microseconds), stop the server.
run() {
	local impl=$1 w=$2 out="$work/server.out" lua="$work/req.lua" url=
	: >"$out"
	taskset -c "$SERVER_CPU" "$work/peer" -impl "$impl" -workload "$w" >"$out" 2>"$work/server.err" &
	server_pid=$!
	for _ in $(seq 200); do
		grep -q '^ready$' "$out" && break
		kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.err" >&2; exit 1; }
		sleep 0.05
	done
	grep -q '^ready$' "$out" || { echo "bench-peers: $impl/$w did not start" >&2; exit 1; }
	url=$(sed -n 's/^url //p' "$out")
	{
		# Every request gets its own id: ids must not repeat while a session has them in flight.
		local b
		b=$(body "$w")
		echo 'wrk.method = "POST"'
		grep ': ' "$out" | while IFS= read -r line; do
			printf 'wrk.headers["%s"] = "%s"\n' "${line%%: *}" "${line#*: }"
		done
		printf 'local head, tail = [==[%s]==], [==[%s]==]\n' "${b%%\"id\":1,*}\"id\":" ",${b#*\"id\":1,}"
		echo 'local n = 0'
		echo 'request = function() n = n + 1; return wrk.format(nil, nil, nil, head .. n .. tail) end'
	} >"$lua"
	local rep
	rep=$(taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency -s "$lua" "$url")
	kill "$server_pid" 2>/dev/null || true
	wait "$server_pid" 2>/dev/null || true
	server_pid=
	if grep -q 'Non-2xx' <<<"$rep"; then
		echo "bench-peers: $impl/$w answered errors:" >&2
		echo "$rep" >&2
		exit 1
	fi
	awk '
		function us(v) {
			if (v ~ /us$/) return v + 0
			if (v ~ /ms$/) return v * 1000
			if (v ~ /s$/) return v * 1000000
			return v
		}
		/^Requests\/sec:/ { rps = $2 }
		$1 == "50%" { p50 = us($2) }
		$1 == "99%" { p99 = us($2) }
		END { printf "%.0f %.0f %.0f\n", rps, p50, p99 }
	' <<<"$rep"
}

echo "# bench-peers: $(nproc) cores, $(uname -m), server on cpu $SERVER_CPU, wrk on cpu $CLIENT_CPU, -c$CONNECTIONS -d$DURATION, $ROUNDS rounds, $(date -u +%Y-%m-%d)"
printf '%-10s %-6s %-8s %10s %9s %9s %8s\n' workload round impl req/s p50_us p99_us x_bare
for w in $WORKLOADS; do
	for round in $(seq "$ROUNDS"); do
		# Alternate the order between rounds so no implementation always runs first.
		order=("${IMPLS[@]}")
		if ((round % 2 == 0)); then order=(mcp-go go-sdk mcpkit bare); fi
		declare -A rps=() p50=() p99=()
		for impl in "${order[@]}"; do
			supports "$impl" "$w" || continue
			read -r rps[$impl] p50[$impl] p99[$impl] < <(run "$impl" "$w")
		done
		for impl in "${IMPLS[@]}"; do
			supports "$impl" "$w" || continue
			ratio=$(awk -v a="${rps[$impl]}" -v b="${rps[bare]}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
			printf '%-10s %-6s %-8s %10s %9s %9s %8s\n' "$w" "$round" "$impl" "${rps[$impl]}" "${p50[$impl]}" "${p99[$impl]}" "$ratio"
		done
		unset rps p50 p99
	done
done

echo
echo "# in process (handler called directly, one request at a time): ns, bytes and allocations per tools/call"
(cd bench && go test -run '^$' -bench BenchmarkInProcess -benchmem -benchtime="$BENCHTIME" ./peers) |
	awk '/^Benchmark/ { sub(/^BenchmarkInProcess\//, "", $1); sub(/-[0-9]+$/, "", $1); printf "%-20s %12s ns %8s B %5s allocs\n", $1, $3, $5, $7 }'

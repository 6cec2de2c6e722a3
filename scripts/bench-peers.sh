#!/usr/bin/env bash
# Side-by-side benchmark: the same echo tool served by a bare net/http + encoding/json handler,
# mcpkit, go-sdk and mcp-go (module bench/), and on the session workload mcpkit with its sessions
# on Redis (mcpkit-redis), loaded with wrk over loopback for several alternating rounds, the
# server pinned to one core and wrk to the other (redis-server shares wrk's core: the machine
# this was written for has two). Prints req/s, p50, p99 and the ratio to bare per round, the
# medians of the rounds, then the in-process ns/B/allocs per request (medians of BENCHCOUNT
# runs). With PROFILE set, a CPU profile of mcpkit on each workload too: in process and under
# load, top 10 functions of each, the files kept in the folder PROFILE names.
#
# Knobs (environment): ROUNDS (5), DURATION (wrk -d, 5s), CONNECTIONS (wrk -c, 32),
# SERVER_CPU (0), CLIENT_CPU (1), WORKLOADS ("stateless modern session"), IMPLS ("bare mcpkit
# mcpkit-redis go-sdk mcp-go"), BENCHTIME (go test -benchtime of the in-process figures, 1s),
# BENCHCOUNT (3), PROFILE (a folder; unset: no profiles). The defaults take about 8 minutes;
# ROUNDS=1 DURATION=1s BENCHTIME=100ms BENCHCOUNT=1 about 1. Needs wrk (Debian package wrk),
# taskset (util-linux) and, for mcpkit-redis, redis-server. Everything listens on 127.0.0.1 and
# every server started is stopped by its PID.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-5s}
CONNECTIONS=${CONNECTIONS:-32}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
WORKLOADS=${WORKLOADS:-stateless modern session}
BENCHTIME=${BENCHTIME:-1s}
BENCHCOUNT=${BENCHCOUNT:-3}
PROFILE=${PROFILE:-}
read -r -a IMPLS <<<"${IMPLS:-bare mcpkit mcpkit-redis go-sdk mcp-go}"
started=$SECONDS

for tool in wrk taskset; do
	command -v "$tool" >/dev/null 2>&1 || { echo "bench-peers: $tool is missing (apt-get install ${tool/taskset/util-linux})" >&2; exit 1; }
done

work=$(mktemp -d)
server_pid=
redis_pid=
cleanup() {
	if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
	if [[ -n $redis_pid ]]; then kill "$redis_pid" 2>/dev/null || true; wait "$redis_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

(cd bench && go build -o "$work/peer" ./cmd/peer)

# supports IMPL WORKLOAD: every implementation speaks both lifecycles; mcpkit-redis serves the
# session workload only (the one with a session to store).
supports() { [[ $1 != mcpkit-redis || $2 == session ]]; }

# wanted IMPL: whether IMPLS names it.
wanted() { [[ " ${IMPLS[*]} " == *" $1 "* ]]; }

# A redis-server for mcpkit-redis, on a free loopback port, pinned with wrk, persistence off.
redis_url=
if wanted mcpkit-redis && [[ " $WORKLOADS " == *" session "* ]]; then
	command -v redis-server >/dev/null 2>&1 || { echo "bench-peers: redis-server is missing (apt-get install redis-server, or IMPLS without mcpkit-redis)" >&2; exit 1; }
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	taskset -c "$CLIENT_CPU" redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
		--dir "$work" --logfile "$work/redis.log" &
	redis_pid=$!
	for _ in $(seq 200); do
		grep -q 'Ready to accept connections' "$work/redis.log" 2>/dev/null && break
		kill -0 "$redis_pid" 2>/dev/null || { cat "$work/redis.log" >&2; exit 1; }
		sleep 0.05
	done
	grep -q 'Ready to accept connections' "$work/redis.log" || { echo "bench-peers: redis-server did not start" >&2; exit 1; }
	redis_url="redis://127.0.0.1:$port/0"
fi

# body WORKLOAD: the tools/call body (the same text as bench/peers.Body).
body() {
	if [[ $1 == modern ]]; then
		printf '%s' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}}}}'
	else
		printf '%s' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}'
	fi
}

# run IMPL WORKLOAD [CPUPROFILE]: start the server on SERVER_CPU, load it from CLIENT_CPU, print
# "req/s p50 p99" (latencies in microseconds), stop the server (which then writes CPUPROFILE).
run() {
	local impl=$1 w=$2 out="$work/server.out" lua="$work/req.lua" url=
	: >"$out"
	local extra=()
	[[ $impl == mcpkit-redis ]] && extra+=(-redis "$redis_url")
	[[ -n ${3:-} ]] && extra+=(-cpuprofile "$3")
	taskset -c "$SERVER_CPU" "$work/peer" -impl "$impl" -workload "$w" "${extra[@]}" >"$out" 2>"$work/server.err" &
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

echo "# bench-peers: $(nproc) cores, $(uname -m), server on cpu $SERVER_CPU, wrk${redis_url:+ and redis-server} on cpu $CLIENT_CPU, -c$CONNECTIONS -d$DURATION, $ROUNDS rounds, $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-10s %-6s %-13s %10s %9s %9s %8s\n' workload round impl req/s p50_us p99_us x_bare
rounds="$work/rounds.txt"
: >"$rounds"
for w in $WORKLOADS; do
	for round in $(seq "$ROUNDS"); do
		# Alternate the order between rounds so no implementation always runs first.
		order=("${IMPLS[@]}")
		if ((round % 2 == 0)); then
			order=()
			for ((i = ${#IMPLS[@]} - 1; i >= 0; i--)); do order+=("${IMPLS[i]}"); done
		fi
		declare -A rps=() p50=() p99=()
		for impl in "${order[@]}"; do
			supports "$impl" "$w" || continue
			run "$impl" "$w" >"$work/result" # not in a subshell: a failure stops the script
			read -r rps[$impl] p50[$impl] p99[$impl] <"$work/result"
		done
		for impl in "${IMPLS[@]}"; do
			supports "$impl" "$w" || continue
			ratio=$(awk -v a="${rps[$impl]}" -v b="${rps[bare]:-0}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
			printf '%-10s %-6s %-13s %10s %9s %9s %8s\n' "$w" "$round" "$impl" "${rps[$impl]}" "${p50[$impl]}" "${p99[$impl]}" "$ratio"
			echo "$w $round $impl ${rps[$impl]}" >>"$rounds"
		done
		unset rps p50 p99
	done
done

# The medians over the rounds of ratios taken within one round: A/B for each pair below.
echo
echo "# medians of the $ROUNDS rounds (ratios within each round; range in brackets)"
awk -v workloads="$WORKLOADS" '
	{ rps[$1 " " $2 " " $3] = $4; w[$1]; r[$2]; impl[$3] }
	function median(a, n,   i, j, t) {
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
	}
	function ratio(wl, x, y,   k, n, v, lo, hi) {
		n = 0
		for (k in r) if ((wl " " k " " x) in rps && (wl " " k " " y) in rps && rps[wl " " k " " y] > 0) v[++n] = rps[wl " " k " " x] / rps[wl " " k " " y]
		if (n == 0) return
		lo = 1e9; hi = 0
		for (k = 1; k <= n; k++) { if (v[k] < lo) lo = v[k]; if (v[k] > hi) hi = v[k] }
		printf "%-10s %-22s %6.2f  (%.2f-%.2f)\n", wl, x " / " y, median(v, n), lo, hi
	}
	# Each workload once, in the order WORKLOADS names them (a name given twice prints once).
	END {
		split("mcpkit/bare mcpkit-redis/mcpkit go-sdk/bare mcp-go/bare mcpkit/mcp-go mcpkit/go-sdk", pairs, " ")
		nw = split(workloads, order, " ")
		for (o = 1; o <= nw; o++) {
			wl = order[o]
			if (!(wl in w) || (wl in printed)) continue
			printed[wl]
			for (p = 1; p in pairs; p++) { split(pairs[p], xy, "/"); ratio(wl, xy[1], xy[2]) }
		}
	}
' "$rounds"

echo
echo "# in process (handler called directly, one request at a time): ns, bytes and allocations per tools/call, median of $BENCHCOUNT"
pattern="^BenchmarkInProcess\$/^($(tr ' ' '|' <<<"$WORKLOADS"))\$/^($(IFS='|'; echo "${IMPLS[*]}"))\$"
(cd bench && MCPKIT_REQUIRE_BINARIES=${redis_url:+1} go test -run '^$' -bench "$pattern" -benchmem -benchtime="$BENCHTIME" -count="$BENCHCOUNT" ./peers) |
	awk '
		/^Benchmark/ { sub(/^BenchmarkInProcess\//, "", $1); sub(/-[0-9]+$/, "", $1); if (!($1 in n)) order[++k] = $1; i = ++n[$1]; ns[$1, i] = $3; by[$1] = $5; al[$1] = $7 }
		END {
			for (o = 1; o <= k; o++) {
				b = order[o]; m = n[b]
				for (i = 1; i <= m; i++) v[i] = ns[b, i]
				for (i = 2; i <= m; i++) for (j = i; j > 1 && v[j-1] > v[j]; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
				med = m % 2 ? v[(m+1)/2] : (v[m/2] + v[m/2+1]) / 2
				printf "%-24s %12.0f ns %8s B %5s allocs\n", b, med, by[b], al[b]
			}
		}
	'

# profile WORKLOAD: mcpkit's CPU profile on WORKLOAD in process and under wrk, top 10 of each.
profile() {
	local w=$1 impl
	for impl in mcpkit mcpkit-redis; do
		wanted "$impl" && supports "$impl" "$w" || continue
		local base="$PROFILE/$w-$impl"
		(cd bench && MCPKIT_REQUIRE_BINARIES=${redis_url:+1} go test -run '^$' -bench "^BenchmarkInProcess\$/^$w\$/^$impl\$" \
			-benchtime="$BENCHTIME" -cpuprofile "$base-inprocess.prof" -o "$base.test" ./peers >/dev/null)
		echo "## $w $impl, in process (flat top 10; $base-inprocess.prof)"
		go tool pprof -top -nodecount=10 "$base.test" "$base-inprocess.prof" 2>/dev/null | sed -n '/flat%/,$p'
		run "$impl" "$w" "$base-loaded.prof" >/dev/null
		echo "## $w $impl, under wrk (flat top 10; $base-loaded.prof)"
		go tool pprof -top -nodecount=10 "$PROFILE/peer" "$base-loaded.prof" 2>/dev/null | sed -n '/flat%/,$p'
	done
}

if [[ -n $PROFILE ]]; then
	mkdir -p "$PROFILE"
	PROFILE=$(cd "$PROFILE" && pwd)
	cp "$work/peer" "$PROFILE/peer"
	echo
	echo "# CPU profiles (go tool pprof -top -cum BINARY FILE.prof for the cumulative view; the binary"
	echo "# of the in-process ones is beside them, of the loaded ones $PROFILE/peer)"
	for w in $WORKLOADS; do profile "$w"; done
fi

echo
echo "# bench-peers took $((SECONDS - started)) s"

#!/usr/bin/env bash
# The cluster test (make cluster-test): three replicas of examples/everything sharing Redis,
# behind nginx (round-robin, one upstream pick per request, no response buffering), everything
# on free 127.0.0.1 ports with its files in a temporary folder, on three Redis topologies in turn:
#   one Redis: the official conformance suites (stable, alpha --requirements 2025-11-25 and
#     2026-07-28) through the proxy, with scripts/conformance.sh (MCPKIT_FIXTURE_URL), tasks
#     included, then the cluster scenarios of internal/clustertest (a sampling answer on another
#     replica, listen and GET streams fed from another replica, then one replica killed);
#   a Redis Cluster (three primaries, three replicas): the redisstore tests on it (the in-flight
#     id and GET-stream conflicts and the per-caller caps through a per-connection round robin
#     over three replicas among them), the same
#     suites and scenarios, and the failover scenario (the primary holding a session killed
#     under traffic);
#   Sentinel (one primary, one replica, three Sentinels): the failover scenario.
# The failover figures go to $MCPKIT_FAILOVER_REPORT (default: printed at the end). Bounded
# (MCPKIT_CLUSTER_TIMEOUT seconds per scenario run, default 300) and stops everything it started,
# by PID, on exit. Needs go, node (for free ports), redis-server, redis-cli and nginx.
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mcpkit_root="$(cd "$script_dir/.." && pwd)"
# shellcheck source=scripts/node.sh
source "$script_dir/node.sh"
# shellcheck source=scripts/fixture.sh
source "$script_dir/fixture.sh"
# shellcheck source=scripts/redis-topologies.sh
source "$script_dir/redis-topologies.sh"

for pair in redis-server:redis-server redis-cli:redis-tools nginx:nginx; do
  if ! command -v "${pair%%:*}" >/dev/null 2>&1; then
    echo "cluster.sh: error: ${pair%%:*} is not installed (Debian package ${pair#*:})" >&2
    exit 2
  fi
done

work="$(mktemp -d "${TMPDIR:-/tmp}/mcpkit-cluster.XXXXXX")"
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  if [[ "${MCPKIT_CLUSTER_KEEP:-}" == "" ]]; then rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# wait_for WHAT SECONDS COMMAND...: run COMMAND until it succeeds, for at most SECONDS.
wait_for() {
  local what="$1" limit="$2" deadline
  shift 2
  deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      echo "cluster.sh: error: $what did not come up within ${limit}s" >&2
      return 1
    fi
    sleep 0.1
  done
}

redis_ping() { [[ "$(redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null)" == "PONG" ]]; }

fixture_build
echo "cluster.sh: files in $work" >&2

state_key="$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"
report="${MCPKIT_FAILOVER_REPORT:-$work/failover.txt}"
export MCPKIT_FAILOVER_REPORT="$report"

# start_fleet NAME FLAG VALUE: three replicas on the Redis named by FLAG VALUE, and nginx in front.
# Sets replica_urls, replica_pids, fleet_pids and proxy_url.
start_fleet() {
  local name="$1" flag="$2" value="$3" i port url upstreams="" user_line=""
  replica_urls=()
  replica_pids=()
  fleet_pids=()
  for i in 1 2 3; do
    port="$(fixture_free_port)"
    "${fixture_cmd[@]}" -http "127.0.0.1:$port" "$flag" "$value" -state-key "$state_key" \
      >"$work/$name-replica$i.log" 2>&1 </dev/null &
    pids+=($!)
    replica_pids+=($!)
    fleet_pids+=($!)
    replica_urls+=("http://127.0.0.1:$port/mcp")
    upstreams+="    server 127.0.0.1:$port max_fails=0;"$'\n'
  done
  for url in "${replica_urls[@]}"; do
    wait_for "replica $url" 30 fixture_http_answers "$url"
  done
  local nginx_port
  nginx_port="$(fixture_free_port)"
  # max_fails=0: a stray upstream error (a client that hung up mid-stream during the suites) must
  # not take a live replica out of rotation; a dead one is skipped per request (connect refused,
  # proxy_next_upstream).
  if [[ "$(id -u)" == 0 ]]; then user_line="user root;"; fi
  local dir="$work/$name-nginx"
  mkdir -p "$dir"
  cat >"$dir/nginx.conf" <<CONF
$user_line
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
  access_log $dir/access.log;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  upstream mcp {
$upstreams  }
  server {
    listen 127.0.0.1:$nginx_port;
    location / {
      proxy_pass http://mcp;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$http_host;
      proxy_buffering off;
      proxy_cache off;
      proxy_read_timeout 1h;
      proxy_send_timeout 1h;
      proxy_next_upstream error timeout;
    }
  }
}
CONF
  nginx -p "$dir" -c "$dir/nginx.conf" -g "daemon off;" </dev/null >"$dir/stdout.log" 2>&1 &
  pids+=($!)
  fleet_pids+=($!)
  proxy_url="http://127.0.0.1:$nginx_port/mcp"
  wait_for "nginx" 20 fixture_http_answers "$proxy_url"
  echo "cluster.sh: $name: 3 replicas behind $proxy_url ($flag $value)" >&2
  export MCPKIT_CLUSTER_PROXY="$proxy_url"
  export MCPKIT_CLUSTER_REPLICAS="${replica_urls[*]}"
  export MCPKIT_CLUSTER_PIDS="${replica_pids[*]}"
}

# stop_fleet: the replicas and nginx of start_fleet, by PID.
stop_fleet() {
  local pid
  for pid in "${fleet_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${fleet_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  fleet_pids=()
}

failed=0

# scenarios NAME PATTERN [PACKAGE [SKIP]]: go test -run PATTERN (-skip SKIP), bounded, its log
# kept.
scenarios() {
  local name="$1" pattern="$2" pkg="${3:-./internal/clustertest}" skip="${4:-}"
  timeout --foreground --kill-after=10 "${MCPKIT_CLUSTER_TIMEOUT:-300}" \
    go test -count=1 -v -run "$pattern" ${skip:+-skip "$skip"} "$pkg" 2>&1 | tee "$work/$name.log" |
    grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)|_test.go' || true
  if ! grep -q '^ok' "$work/$name.log"; then
    failed=1
    echo "cluster.sh: $name failed; replica logs:" >&2
    tail -n 20 "$work"/*replica*.log >&2 || true
  fi
}

run_suites() {
  if [[ "${MCPKIT_CLUSTER_RUNS:-}" == none ]]; then return; fi
  MCPKIT_FIXTURE_URL="$proxy_url" bash "$script_dir/conformance.sh" ${MCPKIT_CLUSTER_RUNS:-stable 2025-11-25 2026-07-28} || failed=1
}

# want TOPOLOGY: whether MCPKIT_CLUSTER_TOPOLOGIES (default "single cluster sentinel") names it.
want() { [[ " ${MCPKIT_CLUSTER_TOPOLOGIES:-single cluster sentinel} " == *" $1 "* ]]; }

# 1. One Redis.
if want single; then
redis_port="$(fixture_free_port)"
redis_node "$redis_port" "$work/single"
wait_for "redis-server" 20 redis_ping "$redis_port"
start_fleet single -redis "redis://127.0.0.1:$redis_port/0"
run_suites
scenarios single-scenarios 'TestCluster'
stop_fleet
fi

# 2. A Redis Cluster.
if want cluster; then
start_redis_cluster
export MCPKIT_REDIS_CLUSTER="$cluster_seeds"
echo "cluster.sh: Redis Cluster at $cluster_seeds" >&2
scenarios redisstore-on-cluster '.' ./redisstore
start_fleet cluster -redis-cluster "$cluster_seeds"
run_suites
redis_pids=""
for port in "${!cluster_pid_of[@]}"; do redis_pids+="$port:${cluster_pid_of[$port]} "; done
# The scenarios run on the healthy Cluster, before the failover leaves it recovering (the
# promoted replica takes the shard channels while the replicas' subscriptions reconnect); the
# one that kills a replica of the fleet runs last, after the failover's figures are in.
scenarios cluster-scenarios 'TestCluster' ./internal/clustertest 'TestClusterZKillReplica'
MCPKIT_FAILOVER=cluster MCPKIT_REDIS_PIDS="$redis_pids" scenarios cluster-failover 'TestFailover'
scenarios cluster-kill-replica 'TestClusterZKillReplica'
stop_fleet
unset MCPKIT_REDIS_CLUSTER
fi

# 3. Sentinel.
if want sentinel; then
start_redis_sentinel
start_fleet sentinel -redis-sentinel "$sentinel_spec"
redis_pids=""
for port in "${!sentinel_pid_of[@]}"; do redis_pids+="$port:${sentinel_pid_of[$port]} "; done
MCPKIT_FAILOVER=sentinel MCPKIT_REDIS_SENTINEL="$sentinel_spec" MCPKIT_REDIS_PIDS="$redis_pids" \
  scenarios sentinel-failover 'TestFailover'
stop_fleet
fi

if [[ -f "$report" ]]; then
  echo "cluster.sh: failover figures:" >&2
  cat "$report" >&2
fi
if ((failed)); then
  echo "cluster.sh: FAIL" >&2
  exit 1
fi
echo "cluster.sh: PASS"

#!/usr/bin/env bash
# The cluster test (make cluster-test): three replicas of examples/everything sharing one Redis,
# behind nginx (round-robin, one upstream pick per request, no response buffering), everything
# on free 127.0.0.1 ports with its files in a temporary folder. Then:
#   1. the official conformance suites (stable, alpha --requirements 2025-11-25 and 2026-07-28)
#      through the proxy, with scripts/conformance.sh (MCPKIT_FIXTURE_URL), tasks included (the
#      replicas keep them in redisstore.TaskStore);
#   2. the cluster scenarios of internal/clustertest (a sampling answer on another replica,
#      listen and GET streams fed from another replica, then one replica killed).
# Bounded (MCPKIT_CLUSTER_TIMEOUT seconds for the scenarios, default 300) and stops everything it
# started, by PID, on exit. Needs go, node (for free ports), redis-server and nginx.
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mcpkit_root="$(cd "$script_dir/.." && pwd)"
# shellcheck source=scripts/node.sh
source "$script_dir/node.sh"
# shellcheck source=scripts/fixture.sh
source "$script_dir/fixture.sh"

for bin in redis-server nginx; do
  if ! command -v "$bin" >/dev/null 2>&1; then
    echo "cluster.sh: error: $bin is not installed (Debian package ${bin})" >&2
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

redis_port="$(fixture_free_port)"
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
  --daemonize no --logfile "$work/redis.log" </dev/null &
pids+=($!)
wait_for "redis-server" 20 redis_ping "$redis_port"
redis_url="redis://127.0.0.1:$redis_port/0"

state_key="$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"
replica_urls=()
replica_pids=()
upstreams=""
for i in 1 2 3; do
  port="$(fixture_free_port)"
  "${fixture_cmd[@]}" -http "127.0.0.1:$port" -redis "$redis_url" -state-key "$state_key" \
    >"$work/replica$i.log" 2>&1 </dev/null &
  pids+=($!)
  replica_pids+=($!)
  replica_urls+=("http://127.0.0.1:$port/mcp")
  upstreams+="    server 127.0.0.1:$port max_fails=0;"$'\n'
done
for url in "${replica_urls[@]}"; do
  wait_for "replica $url" 30 fixture_http_answers "$url"
done

nginx_port="$(fixture_free_port)"
# max_fails=0: a stray upstream error (a client that hung up mid-stream during the suites) must
# not take a live replica out of rotation; a dead one is skipped per request (connect refused,
# proxy_next_upstream).
user_line=""
if [[ "$(id -u)" == 0 ]]; then user_line="user root;"; fi
mkdir -p "$work/nginx"
cat >"$work/nginx/nginx.conf" <<CONF
$user_line
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 1024; }
http {
  access_log $work/nginx/access.log;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  fastcgi_temp_path $work/nginx/fastcgi;
  uwsgi_temp_path $work/nginx/uwsgi;
  scgi_temp_path $work/nginx/scgi;
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
nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" -g "daemon off;" </dev/null >"$work/nginx/stdout.log" 2>&1 &
pids+=($!)
proxy_url="http://127.0.0.1:$nginx_port/mcp"
wait_for "nginx" 20 fixture_http_answers "$proxy_url"
echo "cluster.sh: 3 replicas behind $proxy_url, Redis at $redis_url" >&2

failed=0
MCPKIT_FIXTURE_URL="$proxy_url" bash "$script_dir/conformance.sh" ${MCPKIT_CLUSTER_RUNS:-stable 2025-11-25 2026-07-28} || failed=1

export MCPKIT_CLUSTER_PROXY="$proxy_url"
export MCPKIT_CLUSTER_REPLICAS="${replica_urls[*]}"
export MCPKIT_CLUSTER_PIDS="${replica_pids[*]}"
timeout --foreground --kill-after=10 "${MCPKIT_CLUSTER_TIMEOUT:-300}" \
  go test -count=1 -v -run 'TestCluster' ./internal/clustertest 2>&1 | tee "$work/scenarios.log" |
  grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)|_test.go' || true
if ! grep -q '^ok' "$work/scenarios.log"; then
  failed=1
  echo "cluster.sh: the cluster scenarios failed; replica logs:" >&2
  tail -n 20 "$work"/replica*.log >&2 || true
fi
if ((failed)); then
  echo "cluster.sh: FAIL" >&2
  exit 1
fi
echo "cluster.sh: PASS"

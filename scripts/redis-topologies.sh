#!/usr/bin/env bash
# Local Redis topologies for the cluster test (sourced by scripts/cluster.sh): a Redis Cluster of
# three primaries and three replicas, and a Sentinel setup of one primary, one replica and three
# Sentinels, every server on free 127.0.0.1 ports with its files under $work. The caller owns the
# arrays pids (every process started, stopped by PID on exit) and the functions wait_for,
# redis_ping and fixture_free_port.

# redis_node PORT DIR [ARGS...]: start one redis-server in the background, persistence off.
redis_node() {
  local port="$1" dir="$2"
  shift 2
  mkdir -p "$dir"
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" \
    --daemonize no --logfile "$dir/redis.log" "$@" </dev/null &
  pids+=($!)
}

# start_redis_cluster: six cluster-enabled nodes, joined with redis-cli --cluster create (one
# replica per primary). Sets cluster_ports (all six), cluster_seeds (host:port,... of all six)
# and cluster_pid_of (port -> PID).
declare -A cluster_pid_of=()
start_redis_cluster() {
  local i port addrs=()
  cluster_ports=()
  for i in 1 2 3 4 5 6; do
    port="$(fixture_free_port)"
    # cluster-node-timeout 2000: a primary that stops answering is failed over within seconds.
    redis_node "$port" "$work/cluster/$port" --cluster-enabled yes \
      --cluster-config-file "$work/cluster/$port/nodes.conf" --cluster-node-timeout 2000 \
      --cluster-replica-validity-factor 0
    cluster_pid_of[$port]=${pids[-1]}
    cluster_ports+=("$port")
    addrs+=("127.0.0.1:$port")
  done
  for port in "${cluster_ports[@]}"; do
    wait_for "cluster node $port" 20 redis_ping "$port"
  done
  timeout 60 redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes \
    >"$work/cluster/create.log" 2>&1
  wait_for "the Redis Cluster (cluster_state:ok, slots agreed)" 60 cluster_ok
  cluster_seeds="$(IFS=,; echo "${addrs[*]}")"
}

cluster_ok() {
  local port
  for port in "${cluster_ports[@]}"; do
    redis-cli -h 127.0.0.1 -p "$port" cluster info 2>/dev/null | grep -q '^cluster_state:ok' || return 1
  done
  # and every node agrees on who serves which slot (a client asking early gets MOVED otherwise)
  redis-cli --cluster check "127.0.0.1:${cluster_ports[0]}" 2>/dev/null | grep -q 'All nodes agree about slots configuration'
}

# start_redis_sentinel: a primary, a replica of it and three Sentinels watching it as
# "mcpkit" (quorum 2, down after 1 s). Sets sentinel_spec (mcpkit@host:port,... of the
# Sentinels), sentinel_primary_port, sentinel_replica_port, sentinel_pid_of (port -> PID).
declare -A sentinel_pid_of=()
start_redis_sentinel() {
  local port i conf addrs=()
  sentinel_primary_port="$(fixture_free_port)"
  redis_node "$sentinel_primary_port" "$work/sentinel/primary"
  sentinel_pid_of[$sentinel_primary_port]=${pids[-1]}
  sentinel_replica_port="$(fixture_free_port)"
  redis_node "$sentinel_replica_port" "$work/sentinel/replica" --replicaof 127.0.0.1 "$sentinel_primary_port"
  sentinel_pid_of[$sentinel_replica_port]=${pids[-1]}
  wait_for "the Sentinel primary" 20 redis_ping "$sentinel_primary_port"
  wait_for "the Sentinel replica" 20 redis_ping "$sentinel_replica_port"
  for i in 1 2 3; do
    port="$(fixture_free_port)"
    mkdir -p "$work/sentinel/s$i"
    conf="$work/sentinel/s$i/sentinel.conf"
    cat >"$conf" <<CONF
port $port
bind 127.0.0.1
dir $work/sentinel/s$i
logfile $work/sentinel/s$i/sentinel.log
sentinel monitor mcpkit 127.0.0.1 $sentinel_primary_port 2
sentinel down-after-milliseconds mcpkit 1000
sentinel failover-timeout mcpkit 10000
sentinel parallel-syncs mcpkit 1
CONF
    redis-server "$conf" --sentinel </dev/null &
    pids+=($!)
    sentinel_pid_of[$port]=${pids[-1]}
    addrs+=("127.0.0.1:$port")
    wait_for "Sentinel $port" 20 redis_ping "$port"
  done
  wait_for "the replica to sync" 30 replica_synced "$sentinel_replica_port"
  sentinel_spec="mcpkit@$(IFS=,; echo "${addrs[*]}")"
}

replica_synced() {
  redis-cli -h 127.0.0.1 -p "$1" info replication 2>/dev/null | grep -q '^master_link_status:up'
}

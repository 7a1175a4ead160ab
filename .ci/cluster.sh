#!/usr/bin/env bash
# A local Redis Cluster for the tests: 3 masters and 3 replicas on
# 127.0.0.1:30001-30006 (or the six ports from $FEED_CLUSTER_PORT on), state
# under $FEED_CLUSTER_DIR (default /tmp/feedd-cluster).
#
#   .ci/cluster.sh start   start it (or reuse a healthy one on those ports),
#                          wait until every node says cluster_state:ok and
#                          knows all 6 nodes and every replica has synced,
#                          then print FEED_TEST_REDIS=...
#   .ci/cluster.sh url     print the FEED_TEST_REDIS value only
#   .ci/cluster.sh status  succeed if a healthy cluster answers on those ports
#   .ci/cluster.sh stop    shut the nodes down and remove the state dir
#   .ci/cluster.sh restart PORT
#                          start node PORT again (after a crash or kill -9)
#                          with exactly the settings of start, on its own
#                          state dir and nodes.conf, so it rejoins the
#                          cluster (as a replica, once its replica took over);
#                          wait until it has and is synced. The fault tests
#                          (e2e/faults) kill masters and bring them back so.
#
# Nodes run with the Redis settings the README recommends
# (zset-max-listpack-entries 1024), on every node, so that tests measuring
# memory see it whichever node holds their keys.
#
# Each node's cluster bus listens on its port + 100 (30101-30106), not on
# Redis's default port + 10000: 40001-40006 lie in Linux's ephemeral range
# (32768-60999), where any outgoing connection of the machine may hold the
# port, and a node whose bus port is taken exits at start.
set -euo pipefail

dir=${FEED_CLUSTER_DIR:-/tmp/feedd-cluster}
host=127.0.0.1
base=${FEED_CLUSTER_PORT:-30001}
ports=()
for i in 0 1 2 3 4 5; do ports+=($((base + i))); done
bus_offset=100
deadline_s=${FEED_CLUSTER_WAIT:-60}

# url is the FEED_TEST_REDIS value: every node, so a client starts even when
# the first (seed) node is down.
url() {
  local u="redis://$host:${ports[0]}" sep='?' p
  for p in "${ports[@]:1}"; do
    u+="${sep}addr=$host:$p"
    sep='&'
  done
  printf '%s\n' "$u"
}

cli() { redis-cli -h "$host" -p "$1" "${@:2}"; }

# healthy: every node answers, says cluster_state:ok and knows all nodes,
# and every replica has synced with its master (else it could not take over
# from a master that fails).
healthy() {
  local p info
  for p in "${ports[@]}"; do
    info=$(cli "$p" cluster info 2>/dev/null | tr -d '\r') || return 1
    grep -qx 'cluster_state:ok' <<<"$info" || return 1
    grep -qx "cluster_known_nodes:${#ports[@]}" <<<"$info" || return 1
    info=$(cli "$p" info replication 2>/dev/null | tr -d '\r') || return 1
    if grep -qx 'role:slave' <<<"$info"; then
      grep -qx 'master_link_status:up' <<<"$info" || return 1
    fi
  done
}

# up: every node answers PING.
up() {
  local p
  for p in "${ports[@]}"; do
    [ "$(cli "$p" ping 2>/dev/null)" = PONG ] || return 1
  done
}

# wait_for CHECK WHAT: poll CHECK until it succeeds or the deadline passes.
wait_for() {
  local end=$((SECONDS + deadline_s))
  until "$1"; do
    if [ "$SECONDS" -ge "$end" ]; then
      echo "cluster.sh: $2 not reached within ${deadline_s}s" >&2
      for p in "${ports[@]}"; do
        echo "--- node $p:" >&2
        cli "$p" cluster info 2>&1 | grep -E 'cluster_state|known_nodes' >&2 || true
        if ! cli "$p" ping >/dev/null 2>&1 && [ -f "$dir/$p/redis.log" ]; then
          tail -n 5 "$dir/$p/redis.log" >&2
        fi
      done
      return 1
    fi
    sleep 0.2
  done
}

# start_node PORT: run one node with the cluster's settings; its state
# (nodes.conf, log, pid) lives in $dir/PORT.
start_node() {
  redis-server --bind "$host" --port "$1" --dir "$dir/$1" \
    --cluster-enabled yes --cluster-port $(($1 + bus_offset)) --cluster-config-file "$dir/$1/nodes.conf" \
    --cluster-node-timeout 2000 --save "" --appendonly no \
    --zset-max-listpack-entries 1024 \
    --logfile "$dir/$1/redis.log" --pidfile "$dir/$1/redis.pid" \
    --daemonize yes
}

# restart PORT: start a node that died again, on its nodes.conf, and wait
# until the whole cluster is healthy (it rejoined, as a synced replica if its
# replica took over meanwhile).
restart() {
  local p=${1:-}
  if ! [[ " ${ports[*]} " == *" $p "* ]]; then
    echo "cluster.sh: restart takes one of the ports ${ports[*]}, got '$p'" >&2
    return 2
  fi
  if cli "$p" ping >/dev/null 2>&1; then
    echo "cluster.sh: node $p is running" >&2
    return 1
  fi
  if [ ! -f "$dir/$p/nodes.conf" ]; then
    echo "cluster.sh: no $dir/$p/nodes.conf: node $p was never started by '$0 start'" >&2
    return 1
  fi
  rm -f "$dir/$p/redis.pid"
  start_node "$p"
  wait_for healthy "node $p back, cluster_state:ok with ${#ports[@]} known nodes on every node, replicas synced"
  echo "cluster.sh: node $p rejoined" >&2
}

start() {
  if healthy; then
    echo "cluster.sh: reusing the healthy cluster on $host:${ports[0]}-${ports[-1]}" >&2
    echo "FEED_TEST_REDIS=$(url)"
    return
  fi
  local p busy=()
  for p in "${ports[@]}"; do
    if cli "$p" ping >/dev/null 2>&1; then busy+=("$p"); fi
  done
  if [ "${#busy[@]}" -gt 0 ]; then
    echo "cluster.sh: ports ${busy[*]} answer but do not form a healthy cluster;" \
      "run '$0 stop' (or stop whatever listens there) first" >&2
    return 1
  fi
  mkdir -p "$dir"
  for p in "${ports[@]}"; do
    rm -rf "${dir:?}/$p"
    mkdir -p "$dir/$p"
    start_node "$p"
  done
  # A node that exited at start (a port taken in that instant) gets two more
  # tries, 10 s apart.
  local try
  for try in 1 2; do
    deadline_s=10 wait_for up "every node answering PING" 2>/dev/null && break
    for p in "${ports[@]}"; do
      if ! cli "$p" ping >/dev/null 2>&1; then
        echo "cluster.sh: node $p did not start (try $try); its log ends:" >&2
        tail -n 2 "$dir/$p/redis.log" >&2 || true
        rm -f "$dir/$p/redis.pid" "$dir/$p/nodes.conf"
        start_node "$p"
      fi
    done
  done
  wait_for up "every node answering PING"
  local addrs=()
  for p in "${ports[@]}"; do addrs+=("$host:$p"); done
  redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes >"$dir/create.log" 2>&1 || {
    cat "$dir/create.log" >&2
    return 1
  }
  wait_for healthy "cluster_state:ok with ${#ports[@]} known nodes on every node, replicas synced"
  echo "cluster.sh: cluster up on $host:${ports[0]}-${ports[-1]} (state in $dir)" >&2
  echo "FEED_TEST_REDIS=$(url)"
}

stop() {
  local p
  for p in "${ports[@]}"; do
    cli "$p" shutdown nosave >/dev/null 2>&1 || true
  done
  # Wait for the ports to close before removing the state they write.
  local end=$((SECONDS + deadline_s))
  for p in "${ports[@]}"; do
    while cli "$p" ping >/dev/null 2>&1; do
      if [ "$SECONDS" -ge "$end" ]; then
        echo "cluster.sh: node $p still answers after SHUTDOWN" >&2
        return 1
      fi
      sleep 0.1
    done
  done
  rm -rf "${dir:?}"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
restart) restart "${2:-}" ;;
url) url ;;
status) healthy ;;
*)
  echo "usage: $0 start|stop|url|status|restart PORT" >&2
  exit 2
  ;;
esac

#!/usr/bin/env bash
# A real Spark cluster on loopback: a standalone master, two workers and the Spark Thrift Server, with the
# same Iceberg jars as the local target, on the shared catalog (`make catalog-up`: a Hive metastore in PostgreSQL,
# Iceberg's Hive locks on, the settings in .lakeplan/catalog/spark-conf/), which every session of the Thrift Server
# and any `team` process commit to safely at once. PIDs and logs in .lakeplan/cluster/.
#   scripts/cluster.sh up     start, and wait until the Thrift port answers
#   scripts/cluster.sh down   stop exactly the processes `up` started (by PID)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
home="$repo/.lakeplan/cluster"
run="$home/run"
spark_home=$("$repo/.venv/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')
master_port=${LAKEPLAN_MASTER_PORT:-7077}
master_ui=${LAKEPLAN_MASTER_UI_PORT:-8090}
thrift_port=${LAKEPLAN_THRIFT_PORT:-10001}
driver_ui=${LAKEPLAN_DRIVER_UI_PORT:-4050}
timeout=${LAKEPLAN_CLUSTER_TIMEOUT:-180}

fail() { printf 'lakeplan cluster: %s\n' "$*" >&2; exit 1; }

start() {  # name, command...: runs it in the background, records its PID
  local name=$1; shift
  nohup "$@" > "$run/$name.log" 2>&1 &
  echo $! > "$run/$name.pid"
}

port_open() {
  "$repo/.venv/bin/python" -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$1" 2>/dev/null
}

wait_for_port() {  # port, name
  local waited=0
  until port_open "$1"; do
    [ "$waited" -lt "$timeout" ] || { down; fail "$2 did not answer on 127.0.0.1:$1 within ${timeout}s; see $run/*.log"; }
    for pid_file in "$run"/*.pid; do
      kill -0 "$(cat "$pid_file")" 2>/dev/null || { down; fail "$(basename "$pid_file" .pid) exited; see $run/$(basename "$pid_file" .pid).log"; }
    done
    sleep 2; waited=$((waited + 2))
  done
}

up() {
  [ -z "$(ls "$run"/*.pid 2>/dev/null)" ] || fail "already running (PID files in $run); run 'make cluster-down' first."
  for port in "$master_port" "$thrift_port"; do
    ! port_open "$port" || fail "port $port is taken on 127.0.0.1; set LAKEPLAN_MASTER_PORT / LAKEPLAN_THRIFT_PORT."
  done
  mkdir -p "$run"
  local catalog_conf="$repo/.lakeplan/catalog/spark-conf"
  [ -f "$catalog_conf/spark-defaults.conf" ] || fail "the shared catalog is not set up: run 'make catalog-up' first."
  export SPARK_CONF_DIR="$catalog_conf" SPARK_HOME="$spark_home" SPARK_LOCAL_IP=127.0.0.1 SPARK_NO_DAEMONIZE=1
  local class="$spark_home/bin/spark-class" url="spark://127.0.0.1:$master_port"
  start master "$class" org.apache.spark.deploy.master.Master --host 127.0.0.1 --port "$master_port" --webui-port "$master_ui"
  wait_for_port "$master_port" "the Spark master"
  for n in 1 2; do
    start "worker$n" "$class" org.apache.spark.deploy.worker.Worker --host 127.0.0.1 --cores 1 --memory 2g \
      --webui-port $((master_ui + n)) --work-dir "$home/work$n" "$url"
  done
  start thrift "$spark_home/bin/spark-submit" --master "$url" \
    --class org.apache.spark.sql.hive.thriftserver.HiveThriftServer2 --name lakeplan-thrift \
    --conf spark.ui.enabled=true --conf spark.ui.port="$driver_ui" \
    --conf spark.executor.cores=1 --conf spark.executor.memory=1g --conf spark.cores.max=2 \
    spark-internal --hiveconf hive.server2.thrift.port="$thrift_port" --hiveconf hive.server2.thrift.bind.host=127.0.0.1
  wait_for_port "$thrift_port" "the Spark Thrift Server"
  echo "lakeplan cluster: master $url (UI http://127.0.0.1:$master_ui), Thrift 127.0.0.1:$thrift_port, driver UI http://127.0.0.1:$driver_ui"
}

any_alive() {  # pid...: true while one of them runs
  local pid
  for pid in "$@"; do kill -0 "$pid" 2>/dev/null && return 0; done
  return 1
}

down() {  # all at once, then up to 30 s for the lot: one by one, each JVM's shutdown would add to the wait
  local pids=() pid_file
  for pid_file in "$run"/*.pid; do
    [ -f "$pid_file" ] && pids+=("$(cat "$pid_file")")
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  kill "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 60); do any_alive "${pids[@]}" || break; sleep 0.5; done
  kill -9 "${pids[@]}" 2>/dev/null || true
  rm -f "$run"/*.pid
}

case "${1:-}" in
  up) up ;;
  down) down; echo "lakeplan cluster: stopped" ;;
  *) fail "usage: scripts/cluster.sh up|down" ;;
esac

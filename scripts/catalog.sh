#!/usr/bin/env bash
# The shared catalog (targets `team` and `cluster`): a Hive metastore kept in PostgreSQL, which several processes
# open at once (embedded Derby admits one), with the lock tables Iceberg's Hive locks need.
#   scripts/catalog.sh up     start PostgreSQL on 127.0.0.1 (data in .lakeplan/catalog/), create the metastore's
#                             database and lock tables, write .lakeplan/catalog/spark-conf/; idempotent
#   scripts/catalog.sh down   stop it (the data stays; `make clean` removes it)
#   scripts/catalog.sh status succeeds while it runs
# PostgreSQL refuses to run as root, so as root its server runs as the `postgres` user on a folder that user owns.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# LAKEPLAN_CATALOG_HOME / LAKEPLAN_CATALOG_SETTINGS: another catalog than the clone's (a test's fresh one)
home="${LAKEPLAN_CATALOG_HOME:-$repo/.lakeplan/catalog}"
data="$home/pgdata"
settings="${LAKEPLAN_CATALOG_SETTINGS:-$repo/profiles/shared-catalog.conf}"
# LAKEPLAN_CATALOG_MAX_CONNECTIONS: PostgreSQL's max_connections, read when it starts (below)
max_connections="${LAKEPLAN_CATALOG_MAX_CONNECTIONS:-400}"
url_port='s|^spark.hadoop.javax.jdo.option.ConnectionURL .*jdbc:postgresql://127.0.0.1:\([0-9]*\)/.*|\1|p'
port=$(sed -n "$url_port" "$settings")
jdbc_jar=/usr/share/java/postgresql.jar

fail() { printf 'lakeplan catalog: %s\n' "$*" >&2; exit 1; }
# checked before any command, so a wrong value never stops a running catalog (`make catalog-down catalog-up`): one
# Spark session holds about 10 connections and PostgreSQL keeps 3 for its superuser; 262143 is PostgreSQL's own limit
[[ "$max_connections" =~ ^[0-9]+$ ]] && [ "${#max_connections}" -le 6 ] && [ "$max_connections" -ge 13 ] &&
  [ "$max_connections" -le 262143 ] ||
  fail "LAKEPLAN_CATALOG_MAX_CONNECTIONS is '$max_connections'; set a whole number from 13 (one Spark session's 10 connections and PostgreSQL's 3 for its superuser) to 262143, or unset it for 400. Nothing was started or stopped."

pg_bin() {
  local bin
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -n "$bin" ] || fail "PostgreSQL is missing: 'sudo apt-get install postgresql libpostgresql-jdbc-java', then rerun."
  echo "$bin"
}

ensure_jdbc_driver() {
  [ -f "$jdbc_jar" ] && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libpostgresql-jdbc-java >/dev/null ||
      fail "'apt-get install libpostgresql-jdbc-java' failed: run 'apt-get update' and rerun."
  else
    fail "$jdbc_jar is missing: run 'sudo apt-get install libpostgresql-jdbc-java', then rerun."
  fi
}

as_owner() {  # runs a PostgreSQL program as the user that owns the data (root may not)
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

psql_as() {  # user, database, psql arguments...: over the data folder's socket, notices off
  local user=$1 database=$2; shift 2
  PGOPTIONS='-c client_min_messages=warning' as_owner "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$home/run" -p "$port" \
    -U "$user" -d "$database" "$@"
}

sql() {  # database, statement: as PostgreSQL's superuser
  psql_as postgres "$1" -tAc "$2"
}

# The metastore's WHOLE schema is created here, once, by one Spark session with DataNucleus's autoCreateAll on
# (scripts/metastore_schema.py: every mapped class read outside a transaction, then every kind of object made). Every
# other process runs with autoCreateAll off (profiles/shared-catalog.conf): left on, the first Hive table or view of a
# fresh catalog made DataNucleus add a missing foreign key (ALTER TABLE "TBL_PRIVS") on a second connection of the JVM
# whose first connection holds the table's open transaction: a wait PostgreSQL cannot see as a deadlock, so that process
# and every other hung for good.
create_metastore_tables() {
  [ "$(sql lakeplan_metastore "select 1 from pg_tables where tablename = 'lakeplan_schema_complete'")" = 1 ] && return
  echo "lakeplan catalog: creating the metastore's tables (one Spark session, about a minute)"
  local log="$home/run/create-tables.log"
  SPARK_CONF_DIR="$home/spark-conf" "$repo/.venv/bin/python" "$repo/scripts/metastore_schema.py" >"$log" 2>&1 ||
    fail "creating the metastore's tables failed; see $log."
  psql_as lakeplan lakeplan_metastore -c 'create table lakeplan_schema_complete ()'
}

init() {
  [ -f "$data/PG_VERSION" ] && return
  mkdir -p "$data" "$home/run"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$data" "$home/run"
  chmod 700 "$data"
  as_owner "$bin/initdb" -D "$data" -U postgres -A trust -E UTF8 --no-locale >/dev/null ||
    fail "initdb of $data failed (see above)."
}

# Spark reaches the catalog over TCP, psql here over this folder's socket: another clone's PostgreSQL on the port (same
# role and database, trust) would be used in silence, so the server on the port must be this folder's.
serving_data() {  # the data folder of the PostgreSQL answering on 127.0.0.1:$port; empty where none answers
  as_owner "$bin/psql" -X -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc 'show data_directory' 2>/dev/null || true
}

refuse_other_server() {
  fail "the PostgreSQL on 127.0.0.1:$port is not this clone's (its data: $1; this clone's: $data):" \
    "choose a free port in the ConnectionURL of $settings (docs/team.md) and rerun."
}

up() {
  mkdir -p "$home"
  # two test workers (pytest-xdist) starting it at once: one starts, one waits. The server must not inherit the lock's
  # descriptor (9>&- below): it would hold the lock for as long as it runs, and every later `up` would wait for good.
  exec 9>"$home/.up.lock" && flock 9
  bin=$(pg_bin)
  [ -n "$port" ] || fail "no jdbc:postgresql://127.0.0.1:<port>/ URL in $settings."
  ensure_jdbc_driver
  init
  local serving
  if ! as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    serving=$(serving_data)
    [ -z "$serving" ] || refuse_other_server "$serving"
    # Every Spark JVM on the catalog holds about 10 connections (a pool of 2 each, profiles/shared-catalog.conf):
    # PostgreSQL's default of 100 admitted 9 JVMs at once, and the tenth (a scheduler's job, a notebook, a test
    # module's process) could not open the catalog. 400 admits about 40, at a few MB of memory each while in use.
    as_owner "$bin/pg_ctl" -D "$data" -l "$home/run/postgresql.log" -w -t 60 \
        -o "-p $port -k $home/run -c listen_addresses=127.0.0.1 -c max_connections=$max_connections" start >/dev/null 9>&- ||
      fail "PostgreSQL did not start on 127.0.0.1:$port; see $home/run/postgresql.log (is the port taken?)."
  fi
  serving=$(serving_data)
  [ "$serving" = "$data" ] || [ "$serving" = "$(cd "$data" && pwd -P)" ] ||
    refuse_other_server "${serving:-none answers}"
  [ "$(sql postgres "select 1 from pg_roles where rolname = 'lakeplan'")" = 1 ] ||
    sql postgres "create role lakeplan login password 'lakeplan'"
  [ "$(sql postgres "select 1 from pg_database where datname = 'lakeplan_metastore'")" = 1 ] ||
    sql postgres "create database lakeplan_metastore owner lakeplan"
  psql_as lakeplan lakeplan_metastore -f - < "$repo/profiles/hive-locks.sql" >/dev/null
  "$repo/.venv/bin/lakeplan" setup-spark --home "$home" --conf-only --settings "$settings" >/dev/null
  create_metastore_tables
  echo "lakeplan catalog: PostgreSQL metastore on 127.0.0.1:$port, Spark settings in $home/spark-conf"
}

running() {
  [ -f "$data/PG_VERSION" ] && bin=$(pg_bin) && as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1
}

down() {
  running || return 0
  as_owner "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null
}

case "${1:-}" in
  up) up ;;
  status) running ;;
  down) down; echo "lakeplan catalog: stopped" ;;
  *) fail "usage: scripts/catalog.sh up|down|status" ;;
esac

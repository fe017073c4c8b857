-- The tables Hive 2.3's metastore keeps its locks and transactions in (TxnHandler), on PostgreSQL: those a lock
-- request, its check, heartbeat and release touch (not the compaction queue, which nothing here uses). DataNucleus
-- creates the metastore's catalog tables (DBS, TBLS, ...) on first use but never these, and Iceberg's commits take
-- a Hive lock on the table here: without them every commit with locks on fails. Column names and types follow
-- Hive 2.3's own schema (TxnHandler queries them unquoted, so PostgreSQL folds them to lower case on both sides).
-- Idempotent: scripts/catalog.sh runs it on every `make catalog-up`.

create table if not exists txns (
  txn_id bigint primary key,
  txn_state char(1) not null,
  txn_started bigint not null,
  txn_last_heartbeat bigint not null,
  txn_user varchar(128) not null,
  txn_host varchar(128) not null,
  txn_agent_info varchar(128),
  txn_meta_info varchar(128),
  txn_heartbeat_count integer
);
create table if not exists txn_components (
  tc_txnid bigint references txns (txn_id),
  tc_database varchar(128) not null,
  tc_table varchar(128),
  tc_partition varchar(767),
  tc_operation_type char(1) not null
);
create index if not exists tc_txnid_index on txn_components using hash (tc_txnid);
create table if not exists completed_txn_components (
  ctc_txnid bigint,
  ctc_database varchar(128) not null,
  ctc_table varchar(256),
  ctc_partition varchar(767)
);
create table if not exists next_txn_id (ntxn_next bigint not null);
insert into next_txn_id select 1 where not exists (select from next_txn_id);

-- One row per lock component, heartbeated (hl_last_heartbeat, ms since 1970) while its process lives.
create table if not exists hive_locks (
  hl_lock_ext_id bigint not null,
  hl_lock_int_id bigint not null,
  hl_txnid bigint,
  hl_db varchar(128) not null,
  hl_table varchar(128),
  hl_partition varchar(767),
  hl_lock_state char(1) not null,
  hl_lock_type char(1) not null,
  hl_last_heartbeat bigint not null,
  hl_acquired_at bigint,
  hl_user varchar(128) not null,
  hl_host varchar(128) not null,
  hl_heartbeat_count integer,
  hl_agent_info varchar(128),
  hl_blockedby_ext_id bigint,
  hl_blockedby_int_id bigint,
  primary key (hl_lock_ext_id, hl_lock_int_id)
);
create index if not exists hl_txnid_index on hive_locks using hash (hl_txnid);

-- Hive 2.3 deletes a lock that stopped being heartbeated only in its housekeeping service, which runs in a standalone
-- metastore server and never in a Spark process: a lock left by a killed process (kill -9 mid-commit) would hold its
-- table for good, and a writer waiting on it would retry for many minutes in silence (seen here). A waiting writer's
-- every lock check heartbeats its own row (an UPDATE) and every lock request adds one (an INSERT): with each, the
-- locks nobody heartbeated for 60 s go. A live commit heartbeats its lock every 5 s (profiles/shared-catalog.conf).
create or replace function lakeplan_clear_dead_locks() returns trigger language plpgsql as $$
begin
  delete from hive_locks where hl_last_heartbeat < extract(epoch from clock_timestamp()) * 1000 - 60000;
  return null;
end $$;
create or replace trigger lakeplan_clear_dead_locks after insert or update on hive_locks
  for each statement execute function lakeplan_clear_dead_locks();
create table if not exists next_lock_id (nl_next bigint not null);
insert into next_lock_id select 1 where not exists (select from next_lock_id);

-- The rows Hive's metastore takes `select ... for update` on to serialise lock grants across processes.
create table if not exists aux_table (
  mt_key1 varchar(128) not null,
  mt_key2 bigint not null,
  mt_comment varchar(255),
  primary key (mt_key1, mt_key2)
);
create table if not exists write_set (
  ws_database varchar(128) not null,
  ws_table varchar(128) not null,
  ws_partition varchar(767),
  ws_txnid bigint not null,
  ws_commit_id bigint not null,
  ws_operation_type char(1) not null
);

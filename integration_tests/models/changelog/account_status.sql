{{ config(materialized='upsert', unique_key='id', sequence_by='_seq') }}

-- The changelog applied to an Iceberg table: one row per live key, the latest change wins.
select * from {{ lakeplan.scan_source('changes', 'account_status') }}

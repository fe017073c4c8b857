{{ config(materialized='upsert', unique_key='customer_key', sequence_by='_seq') }}

-- The changelog applied to an Iceberg table: one row per live customer key, the latest change wins.
select * from {{ ref('stg_customer_order_status_changes') }}

{{ config(materialized='upsert', unique_key='customer_key', sequence_by='_seq') }}

-- The changelog applied to an Iceberg table: one row per live customer key, the latest change wins.
select
    status_changes.customer_key,
    status_changes._op,
    status_changes._seq,
    status_changes.status as latest_order_status,
    status_changes.amount as latest_order_amount
from {{ scan_source('cdc', 'customer_order_status') }} as status_changes

{{ config(materialized='view') }}

-- The changelog with readable names, hashed on its key over 4 partitions (scan_parallelism).
select
    status_changes.customer_key,
    status_changes._op,
    status_changes._seq,
    status_changes.status as latest_order_status,
    status_changes.amount as latest_order_amount
from {{ scan_source('cdc', 'customer_order_status') }} as status_changes

{{ config(partial_update_target='customer_360', op_column='_op', sequence_by='_seq') }}

-- A changelog member: its rows carry +I/-U/+U/-D; the target ignores deletes (partial_update_on_delete).
select
    status_changes.customer_key,
    status_changes._op,
    status_changes._seq,
    status_changes.status as latest_order_status,
    status_changes.amount as latest_order_amount
from {{ scan_source('cdc', 'customer_order_status') }} as status_changes

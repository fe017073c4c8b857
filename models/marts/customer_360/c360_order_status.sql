{{ config(partial_update_target='customer_360', op_column='_op', sequence_by='_seq') }}

-- A changelog member: its rows carry +I/-U/+U/-D; the target ignores deletes (partial_update_on_delete).
-- `status_seq` versions the status columns (sequence group): an older change never overwrites a newer one.
select
    *,
    _seq as status_seq
from {{ ref('stg_customer_order_status_changes') }}

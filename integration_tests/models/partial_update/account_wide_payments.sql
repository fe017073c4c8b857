{{ config(partial_update_target='account_wide') }}

select
    account_id as id,
    count(*) as payment_count
from {{ ref('payments') }}
group by account_id

{{ config(partial_update_target='customer_360') }}

select
    c.customer_key,
    c.customer_name,
    c.address,
    c.phone,
    c.account_balance,
    c.market_segment,
    c.customer_comment,
    s.segment_owner,
    s.priority_tier
from {{ ref('stg_customer') }} as c
left join {{ ref('market_segments') }} as s on c.market_segment = s.market_segment

select
    c.customer_key,
    c.customer_name,
    c.market_segment,
    c.account_balance,
    n.nation_name,
    r.region_name,
    s.segment_owner,
    s.priority_tier
from {{ ref('stg_customer') }} as c
inner join {{ ref('stg_nation') }} as n on c.nation_key = n.nation_key
inner join {{ ref('stg_region') }} as r on n.region_key = r.region_key
left join {{ ref('market_segments') }} as s on c.market_segment = s.market_segment

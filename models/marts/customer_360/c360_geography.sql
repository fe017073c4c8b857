{{ config(partial_update_target='customer_360') }}

select
    c.customer_key,
    n.nation_key,
    n.nation_name,
    r.region_key,
    r.region_name
from {{ ref('stg_customer') }} as c
inner join {{ ref('stg_nation') }} as n on c.nation_key = n.nation_key
inner join {{ ref('stg_region') }} as r on n.region_key = r.region_key

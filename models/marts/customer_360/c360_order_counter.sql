{{ config(partial_update_target='customer_360') }}

-- A counter that adds up across runs (merge rule `sum`): each run sends only the orders the table has not
-- counted yet (order keys grow), so a rerun sends nothing and adds nothing.
{% set counted = partial_update_target_relation() %}
select
    o.customer_key,
    count(*) as counted_orders,
    max(o.order_key) as last_counted_order_key
from {{ ref('stg_orders') }} as o
{% if counted %}
    left join {{ counted }} as counted on o.customer_key = counted.customer_key
    where o.order_key > coalesce(counted.last_counted_order_key, -1)
{% endif %}
group by o.customer_key

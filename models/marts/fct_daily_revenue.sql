{{ config(materialized='incremental', incremental_strategy='merge', unique_key='order_date') }}

-- Revenue per order date. Incremental runs recompute the latest days (late lines can still arrive)
-- and MERGE them into the existing Iceberg table.
select
    o.order_date,
    count(distinct o.order_key) as orders,
    sum(l.net_revenue) as net_revenue
from {{ ref('stg_orders') }} as o
inner join {{ ref('stg_lineitem') }} as l on o.order_key = l.order_key
{% if is_incremental() %}
    where o.order_date >= (
            select date_sub(max(current_table.order_date), {{ var('revenue_lookback_days', 7) }})
            from {{ this }} as current_table
        )
{% endif %}
group by o.order_date

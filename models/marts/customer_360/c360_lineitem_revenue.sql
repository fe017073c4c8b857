{{ config(partial_update_target='customer_360') }}

select
    o.customer_key,
    count(*) as line_count,
    sum(l.quantity) as total_quantity,
    sum(l.extended_price) as gross_revenue,
    sum(l.net_revenue) as net_revenue,
    sum(l.extended_price * l.discount) as total_discount,
    sum(l.net_revenue * l.tax) as total_tax,
    count_if(l.return_flag = 'R') as returned_line_count,
    sum(case when l.return_flag = 'R' then l.net_revenue else 0 end) as returned_revenue,
    avg(l.discount) as avg_discount,
    count_if(l.receipt_date > l.commit_date) as late_line_count,
    count(distinct l.part_key) as distinct_parts,
    count(distinct l.supplier_key) as distinct_suppliers,
    min(l.ship_date) as first_ship_date,
    max(l.ship_date) as last_ship_date,
    count_if(l.ship_mode = 'AIR') as air_shipped_lines
from {{ ref('stg_orders') }} as o
inner join {{ ref('stg_lineitem') }} as l on o.order_key = l.order_key
group by o.customer_key

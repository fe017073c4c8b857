{{ config(partial_update_target='customer_360') }}

select
    customer_key,
    count(*) as order_count,
    count_if(order_status = 'O') as open_order_count,
    count_if(order_status = 'F') as fulfilled_order_count,
    count_if(order_status = 'P') as pending_order_count,
    sum(total_price) as total_order_value,
    avg(total_price) as avg_order_value,
    max(total_price) as max_order_value,
    min(total_price) as min_order_value,
    min(order_date) as first_order_date,
    max(order_date) as last_order_date,
    count_if(order_priority = '1-URGENT') as urgent_order_count,
    count_if(order_priority = '2-HIGH') as high_priority_order_count,
    count(distinct clerk) as distinct_clerks
from {{ ref('orders_by_customer') }}
group by customer_key

{{ config(materialized='table', keyed_by=['customer_key'], key_groups=8) }}

-- TPC-H orders bucketed by customer: per-customer work downstream runs without a shuffle.
select
    order_key,
    customer_key,
    order_status,
    total_price,
    order_date,
    order_priority,
    clerk
from {{ ref('stg_orders') }}

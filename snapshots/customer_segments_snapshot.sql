{% snapshot customer_segments_snapshot %}
    {{ config(unique_key='customer_key', strategy='check', check_cols=['market_segment', 'account_balance'],
              enabled=(project_name == 'lakeplan')) }}
    -- History of each customer's segment and balance (dbt snapshot, check strategy, on Iceberg).
    select
        customer_key,
        market_segment,
        account_balance
    from {{ ref('stg_customer') }}
{% endsnapshot %}

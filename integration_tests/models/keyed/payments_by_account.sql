{{ config(materialized='table', keyed_by=['account_id'], key_groups=4) }}

-- Payments bucketed by account: per-account work downstream runs without a shuffle.
select id, account_id, amount from {{ ref('payments') }}

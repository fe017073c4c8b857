{{ config(partial_update_target='account_wide') }}

select id, name from {{ ref('accounts') }}

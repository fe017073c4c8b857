{{ config(partial_update_target='account_wide') }}

select id, region from {{ ref('accounts') }}

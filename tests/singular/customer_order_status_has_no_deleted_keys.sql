-- The changelog deletes every 4th customer in its last version: none of them may remain.
{{ config(enabled=(project_name == 'lakeplan')) }}{#- the template's example: not where lakeplan is a package -#}
select customer_key
from {{ ref('customer_order_status') }}
where customer_key % 4 = 0

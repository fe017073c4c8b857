-- The `sum` counter, fed only orders it has not seen, equals the full recount after any number of runs.
{{ config(enabled=(project_name == 'lakeplan')) }}{#- the template's example: not where lakeplan is a package -#}
select customer_key
from {{ ref('customer_360') }}
where counted_orders is distinct from order_count

-- The `sum` counter, fed only orders it has not seen, equals the full recount after any number of runs.
select customer_key
from {{ ref('customer_360') }}
where counted_orders is distinct from order_count

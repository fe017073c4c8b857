-- Every customer has exactly one customer_360 row, with its profile filled in.
{{ config(enabled=(project_name == 'lakeplan')) }}{#- the template's example: not where lakeplan is a package -#}
select c.customer_key
from {{ ref('stg_customer') }} as c
left join {{ ref('customer_360') }} as c360 on c.customer_key = c360.customer_key
where c360.customer_key is null or c360.customer_name is null

{#- Runs a statement that returns no rows (DDL, RESET). run_query fetches a result, which the Thrift
    connection does not have for such statements. -#}
{% macro lakeplan_execute(sql) %}
    {%- do adapter.execute(sql, auto_begin=false, fetch=false) -%}
{% endmacro %}

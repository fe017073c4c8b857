{#- dbt-spark's table properties, plus the fingerprint a stateful model records when its table is built,
    what it consumed of the inputs it reads with new_rows, and the column metrics a target in delta mode reads;
    every key and value is a quoted literal. -#}
{% macro spark__tblproperties_clause() -%}
    {%- set properties = {} -%}
    {%- do properties.update(config.get('tblproperties') or {}) -%}
    {%- do properties.update(lakeplan.lakeplan_fingerprint_properties()) -%}
    {%- do properties.update(lakeplan.lakeplan_consumed_properties()) -%}
    {%- do properties.update(lakeplan.lakeplan_delta_metrics_properties()) -%}
    {%- if properties %}tblproperties ({{ lakeplan.lakeplan_properties_sql(properties) }}){% endif -%}
{%- endmacro %}

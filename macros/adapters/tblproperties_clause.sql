{#- dbt-spark's table properties, plus the fingerprint a stateful model records when its table is built;
    every key and value is a quoted literal. -#}
{% macro spark__tblproperties_clause() -%}
    {%- set properties = {} -%}
    {%- do properties.update(config.get('tblproperties') or {}) -%}
    {%- do properties.update(lakeplan.lakeplan_fingerprint_properties()) -%}
    {%- set pairs = [] -%}
    {%- for key, value in properties.items() -%}
        {%- do pairs.append(lakeplan.lakeplan_string_literal(key) ~ ' = ' ~ lakeplan.lakeplan_string_literal(value)) -%}
    {%- endfor -%}
    {%- if pairs %}tblproperties ({{ pairs | join(', ') }}){% endif -%}
{%- endmacro %}

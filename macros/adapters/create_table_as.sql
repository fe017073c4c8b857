{#- dbt-spark's table DDL, with the model's sink `parallelism` applied to the query it writes, and a log line
    when the query joins keyed inputs that Spark must reshuffle. -#}
{% macro spark__create_table_as(temporary, relation, compiled_code, language='sql') -%}
    {%- if language == 'sql' -%}{%- do lakeplan.lakeplan_report_keyed_joins(compiled_code) -%}{%- endif -%}
    {%- set query = lakeplan.lakeplan_sink_distribution(compiled_code) if language == 'sql' else compiled_code -%}
    {{ return(dbt.spark__create_table_as(temporary, relation, query, language)) }}
{%- endmacro %}

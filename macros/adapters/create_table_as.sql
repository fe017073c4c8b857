{#- dbt-spark's table DDL, with the model's sink `parallelism` applied to the query it writes, a log line when the
    query joins keyed inputs that Spark must reshuffle, an incremental run's check of the kept table's layout, and
    the check of a partition change a replace of the table cannot make. -#}
{% macro spark__create_table_as(temporary, relation, compiled_code, language='sql') -%}
    {%- if language == 'sql' -%}{%- do lakeplan.lakeplan_report_keyed_joins(compiled_code) -%}{%- endif -%}
    {#- a temporary view here is an incremental run's new rows, to go into the kept table -#}
    {%- if temporary and language == 'sql' and model.resource_type == 'model' -%}
        {%- do lakeplan.lakeplan_check_model_layout() -%}
    {%- endif -%}
    {%- set replaced = load_relation(relation) if not temporary and model.resource_type == 'model' else none -%}
    {%- if replaced is not none and not replaced.is_view -%}
        {%- do lakeplan.lakeplan_check_partition_widths(replaced) -%}
    {%- endif -%}
    {%- set query = lakeplan.lakeplan_sink_distribution(compiled_code) if language == 'sql' else compiled_code -%}
    {{ return(dbt.spark__create_table_as(temporary, relation, query, language)) }}
{%- endmacro %}

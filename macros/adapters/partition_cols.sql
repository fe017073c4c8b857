{#- dbt-spark's partition clause, plus a keyed model's layout: `keyed_by` + `key_groups` add Iceberg's
    bucket(key_groups, key) transform, which Spark reads as a key-grouped partitioning (no shuffle for
    GROUP BY, windows and joins on the key). -#}
{% macro spark__partition_cols(label, required=false) %}
    {%- set partition_by = config.get('partition_by') -%}
    {%- set columns = [] if partition_by is none else ([partition_by] if partition_by is string else partition_by) -%}
    {#- seeds and snapshots share this clause and have no plan -#}
    {%- set keyed = lakeplan.lakeplan_plan().keyed if model.resource_type == 'model' else none -%}
    {%- if keyed -%}
        {%- set columns = columns
            + ['bucket(' ~ keyed.key_groups ~ ', ' ~ lakeplan.lakeplan_quote(keyed['keys'][0]) ~ ')'] -%}
    {%- endif -%}
    {%- if columns %}{{ label }} ({{ columns | join(', ') }}){% endif -%}
{% endmacro %}

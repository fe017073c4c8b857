{#- Model config `parallelism` (Flink FLIP-146, the sink side of FLIP-367): the model's final write is
    redistributed to that many partitions, hashed on `unique_key` where the model has one. -#}
{% macro lakeplan_sink_distribution(sql) %}
    {#- snapshots and unit tests reach the same DDL, with no plan and nothing to distribute -#}
    {%- if model.resource_type != 'model' -%}{{ return(sql) }}{%- endif -%}
    {%- set plan = lakeplan.lakeplan_plan() -%}
    {{ return(lakeplan.lakeplan_sink_distribution_by(sql, plan.distribution.parallelism, plan.key)) }}
{% endmacro %}

{#- `sql` redistributed into `parallelism` partitions, hashed on `keys` when there are any. -#}
{% macro lakeplan_sink_distribution_by(sql, parallelism, keys) %}
    {%- if parallelism is none -%}{{ return(sql) }}{%- endif -%}
    {{ return('select * from ' ~ lakeplan.lakeplan_repartition('(' ~ sql ~ ')', parallelism, keys)) }}
{% endmacro %}

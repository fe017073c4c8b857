{#- Model config `parallelism` (Flink FLIP-146, the sink side of FLIP-367): the model's final write is
    redistributed to that many partitions, hashed on `unique_key` where the model has one. -#}
{% macro lakeplan_sink_distribution(sql) %}
    {%- set parallelism = config.get('parallelism') -%}
    {%- if parallelism is none -%}{{ return(sql) }}{%- endif -%}
    {%- do lakeplan.lakeplan_check_parallelism(parallelism, 'model `' ~ model.name ~ '`', 'parallelism') -%}
    {%- set unique_key = config.get('unique_key') -%}
    {%- set keys = [] if unique_key is none else ([unique_key] if unique_key is string else unique_key) -%}
    {{ return(lakeplan.lakeplan_sink_distribution_by(sql, parallelism, keys)) }}
{% endmacro %}

{#- `sql` redistributed into `parallelism` partitions, hashed on `keys` when there are any. -#}
{% macro lakeplan_sink_distribution_by(sql, parallelism, keys) %}
    {%- if parallelism is none -%}{{ return(sql) }}{%- endif -%}
    {{ return('select * from ' ~ lakeplan.lakeplan_repartition('(' ~ sql ~ ')', parallelism, keys)) }}
{% endmacro %}

{#- Raises unless `value` is a positive integer; `owner` and `setting` name where it was configured. -#}
{% macro lakeplan_check_parallelism(value, owner, setting) %}
    {%- if value is not integer or value is boolean or value < 1 -%}
        {%- set invalid_parallelism_msg -%}
Invalid configured parallelism {{ value | tojson }} for {{ owner }} (`{{ setting }}`).
It must be a positive integer: the number of partitions of that stage.
Fix: set `{{ setting }}` to a whole number of at least 1, or remove it to keep the default parallelism.
        {%- endset -%}
        {%- do exceptions.raise_compiler_error(invalid_parallelism_msg) -%}
    {%- endif -%}
{% endmacro %}

{#- Wraps a query in Spark's REPARTITION hint: round-robin over `partitions`, or hash on `keys`.
    The hint is a shuffle of its own (Exchange RoundRobinPartitioning / hashpartitioning), which AQE
    does not coalesce, so the stage behind it runs with exactly `partitions` tasks. `partitions` none (with
    `keys`): Spark's own count, `spark.sql.shuffle.partitions`, which AQE may coalesce. -#}
{% macro lakeplan_repartition(query, partitions, keys=[]) %}
    {{ return(adapter.dispatch('lakeplan_repartition', 'lakeplan')(query, partitions, keys)) }}
{% endmacro %}

{% macro default__lakeplan_repartition(query, partitions, keys) %}
    {%- set arguments = ([] if partitions is none else [partitions | string])
        + ([lakeplan.lakeplan_quote_list(keys)] if keys else []) -%}
    {%- set hint = '/*+ REPARTITION(' ~ arguments | join(', ') ~ ') */' -%}
    {{ return('(select ' ~ hint ~ ' * from ' ~ query ~ ' as lakeplan_repartitioned)') }}
{% endmacro %}

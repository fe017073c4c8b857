{#- Whether this is a `dbt run/build --empty`: dbt reads every ref and source as zero rows, to check that the
    project builds. -#}
{% macro lakeplan_empty_run() %}
    {{ return(flags.EMPTY is true) }}
{% endmacro %}

{#- Whether lakeplan's write may change the table: always, except under `--empty` where a table exists (also with
    --full-refresh), which keeps its rows, tombstones, schema and recorded state. A table that does not exist yet
    is created, empty, as dbt's incremental does under `--empty`. `existing`: the relation there now, or none. -#}
{% macro lakeplan_writes(existing) %}
    {{ return(not lakeplan.lakeplan_empty_run() or existing is none or existing.is_view) }}
{% endmacro %}

{#- The `main` statement of a model that is not written under `--empty`: `rows`, the query of what it would write,
    run (so Spark analyses it) and counted (zero). -#}
{% macro lakeplan_empty_run_sql(rows) %}
    {{ return('-- dbt --empty: ' ~ this ~ ' exists and is not written\nselect count(*) as lakeplan_rows from ('
        ~ rows ~ ') as lakeplan_rows') }}
{% endmacro %}

{#- The `main` statement of a run that writes nothing (under --empty, nothing new to read, a run the table already
    holds): dbt's result line shows `response` where it shows Spark's `OK` for a write, e.g. `[NOTHING NEW in 2.1s]`,
    so that its `OK created` is not taken for a write. -#}
{% macro lakeplan_main_without_write(sql, response) %}
    {%- call statement('main') -%}{{ sql }}{%- endcall -%}
    {%- do store_result('main', response=response, agate_table=load_result('main').table) -%}
{% endmacro %}

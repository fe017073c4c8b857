{#- The branch an incremental run of `existing` writes through (its run's own, named after dbt's invocation id), or
    none where the run writes `main` itself as dbt-spark does: a first run or full refresh (one CREATE OR REPLACE),
    a table that is not Iceberg, a Python model, a microbatch (its batches of one model may run at once, and would
    meet each other), and a catalog only this process commits to (lakeplan_shared_catalog). -#}
{% macro lakeplan_incremental_branch(existing, strategy, language) %}
    {%- if language != 'sql' or not existing.is_iceberg or strategy not in ['append', 'merge', 'insert_overwrite']
        or not lakeplan.lakeplan_shared_catalog() -%}
        {{ return(none) }}
    {%- endif -%}
    {{ return('lakeplan_write_' ~ (invocation_id | replace('-', ''))[:12]) }}
{% endmacro %}

{#- The statements of an incremental write through `branch`, as lakeplan_run_steps runs them: the branch from main's
    head, then dbt-spark's own write (`write_sql`, built for `target`) into the branch, then main's fast-forward to
    it, the commit, then the branch's removal. The branch is made just before the write: the model's rows are the
    temporary view dbt-spark created, which Spark keeps as SQL text and analyses again in the write, so `{{ this }}`
    is read by the write itself, from main's head as the branch began or later. A main another run moved in between
    fails the fast-forward ('Cannot fast-forward'), told as the run that beat this one; a failed or cancelled
    statement that names the branch removes it (plugins/dbt_lakeplan/concurrency.py). -#}
{% macro lakeplan_incremental_branch_steps(write_sql, target, branch) %}
    {%- set into = target ~ '.branch_' ~ branch -%}
    {%- set written = namespace(sql=write_sql) -%}
    {#- the heads of dbt-spark's strategies (get_insert_into_sql, get_insert_overwrite_sql, spark__get_merge_sql) -#}
    {%- for head in ['insert into table ', 'insert overwrite table ', 'insert overwrite ', 'merge into '] -%}
        {%- set written.sql = written.sql | replace(head ~ target ~ '\n', head ~ into ~ '\n')
            | replace(head ~ target ~ ' ', head ~ into ~ ' ') -%}
    {%- endfor -%}
    {%- if into not in written.sql -%}
        {%- set unknown_msg -%}
            lakeplan cannot write incremental model `{{ model.name }}` through its run's branch: its write does not start with `insert into table {{ target }}`, `insert overwrite {{ target }}` or `merge into {{ target }}` (dbt-spark's strategies), so a run overlapping another could not be told apart. Fix: keep dbt-spark's strategy macros (get_insert_into_sql, get_insert_overwrite_sql, get_merge_sql) as they write, or set its incremental_strategy to append, merge or insert_overwrite.
        {%- endset -%}
        {%- do exceptions.raise_compiler_error(unknown_msg) -%}
    {%- endif -%}
    {{ return([
        {'name': none, 'sql': 'alter table ' ~ target ~ ' create branch ' ~ branch},
        {'name': 'write_' ~ branch, 'sql': written.sql | trim},
        {'name': 'main', 'branch': branch, 'sql': lakeplan.lakeplan_commit_marker(target) ~ 'call system.fast_forward('
            ~ lakeplan.lakeplan_string_literal(target | string) ~ ", 'main', '" ~ branch ~ "')"},
        {'name': none, 'sql': 'alter table ' ~ target ~ ' drop branch if exists ' ~ branch, 'records': target},
    ]) }}
{% endmacro %}

{#- Whether another session can commit to this run's tables: Iceberg's Hive locks are on where two sessions can
    commit (a shared catalog: the `team` and `cluster` targets, docs/team.md), off on the embedded catalog, which
    one process holds. -#}
{% macro lakeplan_shared_catalog() %}
    {{ return(adapter.lakeplan_shared_catalog()) }}
{% endmacro %}

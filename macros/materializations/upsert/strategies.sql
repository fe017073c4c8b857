{#- The latest change per key, one row each: the query the MERGE reads.
    Order within a key: highest `sequence_by` first (NULL counts as oldest); on a tie a -D wins over
    +I/+U; remaining ties go to the greatest row by its JSON text, so the pick never depends on how
    Spark partitioned the input. -U rows are dropped (the +U after them carries the new values).
    Rows with an unknown op or a NULL key stop the statement, and with it the whole write.
    `columns`: the query's columns, op column included. -#}
{% macro lakeplan_changelog_latest_sql(sql, spec, columns, tombstones=none) %}
    {%- set op = lakeplan.lakeplan_quote(spec.op_column) -%}
    {%- set keys = lakeplan.lakeplan_quote_list(spec.unique_key) -%}
    {%- set sequence = lakeplan.lakeplan_quote(spec.sequence_by) if spec.sequence_by else 'null' -%}
    {%- set projections = [] -%}
    {%- for column in columns -%}
        {%- do projections.append('lakeplan_ranked.' ~ lakeplan.lakeplan_quote(column)) -%}
    {%- endfor -%}
    {%- set tombstone_join = lakeplan.lakeplan_join_tombstones(tombstones, 'lakeplan_ranked', spec.unique_key)
        if tombstones else '' -%}
    {%- set tombstone_filter = ' and (lakeplan_ranked.' ~ op ~ " = '-D' or "
        ~ lakeplan.lakeplan_after_tombstone('lakeplan_ranked.' ~ sequence) ~ ')' if tombstones else '' %}
    select {{ projections | join(', ') }}
    from (
        select
            *,
            row_number() over (
                partition by {{ keys }}
                order by {{ sequence }} desc nulls last, case when {{ op }} = '-D' then 0 else 1 end, to_json(struct(*)) desc
            ) as lakeplan_rank
        from ({{ lakeplan.lakeplan_changelog_checked_sql(sql, spec) }}) as lakeplan_checked
        where {{ op }} != '-U'
    ) as lakeplan_ranked {{ tombstone_join }}
    where lakeplan_ranked.lakeplan_rank = 1{{ tombstone_filter }}
{% endmacro %}

{#- The changelog's rows, each checked: an unknown op or a NULL key stops the statement. -#}
{% macro lakeplan_changelog_checked_sql(sql, spec) %}
    {%- set guard = lakeplan.lakeplan_row_guard(spec.unique_key, spec.op_column,
        ' in model `' ~ spec.model ~ '` (op column `' ~ spec.op_column ~ '`)', spec.model, '`' ~ spec.model ~ '`\'s query') %}
    select *
    from ({{ sql }}) as lakeplan_changelog
    where {{ guard }}
{% endmacro %}

{#- The comment line naming the upsert a statement writes, for an error its query raises
    (plugins/dbt_lakeplan/spark_adapter.py reads it). -#}
{% macro lakeplan_upsert_label(spec) %}
    {{ return('\n-- upsert `' ~ spec.model ~ '`\n') }}
{% endmacro %}

{#- This run's deletes for the tombstones: the key and the sequence of every checked -D row. -#}
{% macro lakeplan_changelog_deletes_sql(sql, spec) %}
    select {{ lakeplan.lakeplan_quote_list(spec.unique_key) }}, {{ lakeplan.lakeplan_quote(spec.sequence_by) }} as lakeplan_sequence
    from ({{ lakeplan.lakeplan_changelog_checked_sql(sql, spec) }}) as lakeplan_checked
    where {{ lakeplan.lakeplan_quote(spec.op_column) }} = '-D'
{% endmacro %}

{#- One MERGE that applies the latest changes: a change replaces or deletes the stored row only when it
    is not older than it (late rows lose); a -D for a key the table lacks does nothing. -#}
{% macro lakeplan_upsert_merge_sql(target, changes, spec, columns) %}
    {%- set op = 'lakeplan_change.' ~ lakeplan.lakeplan_quote(spec.op_column) -%}
    {%- set matches = lakeplan.lakeplan_key_matches('lakeplan_table', 'lakeplan_change', spec.unique_key) -%}
    {%- if spec.sequence_by -%}
        {%- set stored = 'lakeplan_table.' ~ lakeplan.lakeplan_quote(spec.sequence_by) -%}
        {%- set not_older = '(' ~ stored ~ ' is null or lakeplan_change.' ~ lakeplan.lakeplan_quote(spec.sequence_by) ~ ' >= ' ~ stored ~ ')' -%}
    {%- else -%}
        {%- set not_older = 'true' -%}
    {%- endif -%}
    {%- set assignments = [] -%}
    {%- set values = [] -%}
{%- for column in columns -%}
    {%- do assignments.append(
        lakeplan.lakeplan_quote(column) ~ ' = lakeplan_change.' ~ lakeplan.lakeplan_quote(column)) -%}
    {%- do values.append('lakeplan_change.' ~ lakeplan.lakeplan_quote(column)) -%}
{%- endfor %}
    merge into {{ target }} as lakeplan_table
    using {{ changes }} as lakeplan_change
    on {{ matches }}
    when matched and {{ op }} = '-D' and {{ not_older }} then delete
    when matched and {{ op }} != '-D' and {{ not_older }} then update set {{ assignments | join(', ') }}
    when not matched and {{ op }} != '-D' then insert ({{ lakeplan.lakeplan_quote_list(columns) }}) values ({{ values | join(', ') }})
{% endmacro %}

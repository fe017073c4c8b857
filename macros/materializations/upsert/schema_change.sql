{#- The columns an `upsert`'s MERGE writes into its existing table, by dbt's `on_schema_change` (as for an incremental
    model; the planner checks the value): `ignore` (default) writes the columns the table has and leaves a new one
    out; `fail` stops the run; `append_new_columns` adds the new columns to the table; `sync_all_columns` also drops
    the columns the query no longer selects and widens changed types (Iceberg changes a type only by widening it).
    Checked before anything is written; `apply`: false under --empty (checked, the table not altered). -#}
{% macro lakeplan_upsert_schema_change(spec, sql, columns, relation, apply=true) %}
    {%- set setting = config.get('on_schema_change') or 'ignore' -%}
    {%- set query = 'select ' ~ lakeplan.lakeplan_quote_list(columns) ~ ' from (' ~ sql ~ ') as lakeplan_query' -%}
    {%- set stored = adapter.get_columns_in_relation(relation) -%}
    {%- set stored_types = {} -%}
    {%- for column in stored -%}{%- do stored_types.update({column.name | lower: column.data_type}) -%}{%- endfor -%}
    {%- set queried_names = columns | map('lower') | list -%}
    {%- set added, retyped, kept = [], [], [] -%}
    {%- for column in format_columns(get_column_schema_from_query(query)) -%}
        {%- set old_type = stored_types.get(column.name | lower) -%}
        {%- if old_type is none -%}
            {%- do added.append(column) -%}
        {%- else -%}
            {%- do kept.append(column.name) -%}
            {#- a narrower type than the table's is written as it is: not a change of the table -#}
            {%- if old_type != column.data_type and not lakeplan.lakeplan_iceberg_widens(column.data_type, old_type) -%}
                {%- do retyped.append((column, old_type)) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set removed = [] -%}
    {%- for column in stored if column.name | lower not in queried_names -%}
        {%- do removed.append(column) -%}
    {%- endfor -%}
    {%- set changes = lakeplan.lakeplan_schema_changes_text(added, removed, retyped) -%}
    {%- set syncs = setting == 'sync_all_columns' -%}
    {%- if changes and setting == 'fail' -%}
        {%- do exceptions.raise_compiler_error(spec.owner ~ ' has on_schema_change: fail, and its query no longer matches '
            ~ 'its table ' ~ relation ~ ' (' ~ changes ~ '); nothing was written. Fix: set on_schema_change to '
            ~ 'append_new_columns or sync_all_columns, or rebuild the table: dbt run --full-refresh -s ' ~ spec.model
            ~ ' (remembered deletes are kept).') -%}
    {%- elif changes and setting != 'ignore' and apply -%}
        {%- do lakeplan.lakeplan_upsert_alter_table(spec, relation, setting, added,
            removed if syncs else [], retyped if syncs else []) -%}
    {%- elif added and setting == 'ignore' -%}
        {%- do log('lakeplan: ' ~ spec.owner ~ ' (on_schema_change: ignore) does not write '
            ~ lakeplan.lakeplan_schema_changes_text(added, [], []) ~ '.') -%}
    {%- endif -%}
    {{ return(kept if setting == 'ignore' else columns) }}
{% endmacro %}

{#- Makes an upsert's table hold the query's columns (on_schema_change append_new_columns, or sync_all_columns: then
    `removed` and `retyped` too), after checking that Iceberg can widen every retyped column. -#}
{% macro lakeplan_upsert_alter_table(spec, relation, setting, added, removed, retyped) %}
    {%- for column, old_type in retyped if not lakeplan.lakeplan_iceberg_widens(old_type, column.data_type) -%}
        {%- do exceptions.raise_compiler_error(spec.owner ~ ' has on_schema_change: ' ~ setting ~ ', and its query '
            ~ 'now selects `' ~ column.name ~ '` as ' ~ column.data_type ~ ' where its table ' ~ relation ~ ' holds '
            ~ old_type ~ ', a change Iceberg cannot make in place (it only widens int to bigint, float to double '
            ~ 'and a decimal\'s precision); nothing was written. Fix: cast `' ~ column.name ~ '` to ' ~ old_type
            ~ ' in the query, or rebuild the table: dbt run --full-refresh -s ' ~ spec.model
            ~ ' (remembered deletes are kept).') -%}
    {%- endfor -%}
    {%- set additions = [] -%}
    {%- for column in added -%}
        {%- do additions.append(lakeplan.lakeplan_quote(column.name) ~ ' ' ~ column.data_type) -%}
    {%- endfor -%}
    {%- if additions -%}
        {%- do lakeplan.lakeplan_execute(
            'alter table ' ~ relation ~ ' add columns (' ~ additions | join(', ') ~ ')') -%}
    {%- endif -%}
    {%- if removed -%}
        {%- do lakeplan.lakeplan_execute('alter table ' ~ relation ~ ' drop columns ('
            ~ lakeplan.lakeplan_quote_list(removed | map(attribute='name')) ~ ')') -%}
    {%- endif -%}
    {%- for column, old_type in retyped -%}
        {%- do alter_column_type(relation, lakeplan.lakeplan_quote(column.name), column.data_type) -%}
    {%- endfor -%}
    {%- do log('lakeplan: ' ~ spec.owner ~ ' (on_schema_change: ' ~ setting ~ ') changed its table: '
        ~ lakeplan.lakeplan_schema_changes_text(added, removed, retyped) ~ '.', info=true) -%}
{% endmacro %}

{#- The differences between a query's columns and its table's, as text: "new `extra` string, ...". -#}
{% macro lakeplan_schema_changes_text(added, removed, retyped) %}
    {%- set parts = [] -%}
    {%- for column in added -%}{%- do parts.append('new `' ~ column.name ~ '` ' ~ column.data_type) -%}{%- endfor -%}
    {%- for column in removed -%}{%- do parts.append('no longer selected `' ~ column.name ~ '`') -%}{%- endfor -%}
    {%- for column, old_type in retyped -%}
        {%- do parts.append('`' ~ column.name ~ '` ' ~ old_type ~ ' -> ' ~ column.data_type) -%}
    {%- endfor -%}
    {{ return(parts | join(', ')) }}
{% endmacro %}

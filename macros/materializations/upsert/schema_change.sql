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
            {#- a narrower type than the table's is written as it is, and one Iceberg stores as the table's type (a
                tinyint as an int) is that type: not a change of the table -#}
            {%- if lakeplan.lakeplan_normal_type(old_type) != lakeplan.lakeplan_iceberg_type(column.data_type)
                and not lakeplan.lakeplan_iceberg_widens(column.data_type, old_type) -%}
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
            ~ 'its table ' ~ relation ~ ' (' ~ changes ~ '); nothing was written. Fix: '
            ~ lakeplan.lakeplan_schema_change_fix(removed, retyped)) -%}
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
            ~ 'and a decimal\'s precision); nothing was written. Fix: '
            ~ lakeplan.lakeplan_upsert_retype_fix(column.name, old_type, column.data_type)) -%}
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

{#- The on_schema_change that takes a changed query and keeps every stored value: append_new_columns keeps the columns
    the query no longer selects; only sync_all_columns changes a type (by widening it), and it drops those columns. -#}
{% macro lakeplan_schema_change_fix(removed, retyped) %}
    {%- set rebuild = lakeplan.lakeplan_upsert_rebuild() ~ '.' -%}
    {%- set dropped = removed | map(attribute='name') | join('`, `') -%}
    {%- for column, old_type in retyped if not lakeplan.lakeplan_iceberg_widens(old_type, column.data_type) -%}
        {{ return(lakeplan.lakeplan_upsert_retype_fix(column.name, old_type, column.data_type)) }}
    {%- endfor -%}
    {%- if not retyped -%}
        {{ return('set on_schema_change to append_new_columns, which keeps every stored column, or ' ~ rebuild) }}
    {%- endif -%}
    {{ return('set on_schema_change to sync_all_columns, which widens ' ~ lakeplan.lakeplan_schema_changes_text([], [],
        retyped) ~ ' in place' ~ ('; it also drops `' ~ dropped ~ '` with their values, unless the query selects them '
        ~ 'again' if removed else '') ~ ', or ' ~ rebuild) }}
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

{#- How an upsert whose query now gives `column` the type `new` keeps every value of its table, stored as `stored`:
    Iceberg widens some types in place (sync_all_columns does it); a cast into the stored type is named only where it
    keeps every value, as Spark's cast turns a value the type cannot hold into NULL or another number, in silence. -#}
{% macro lakeplan_upsert_retype_fix(column, stored, new) %}
    {%- set rebuild = lakeplan.lakeplan_upsert_rebuild() -%}
    {%- if lakeplan.lakeplan_iceberg_widens(stored, new) -%}
        {{ return('set `on_schema_change: sync_all_columns` on `' ~ model.name ~ '`: it widens `' ~ column ~ '` from '
            ~ stored ~ ' to ' ~ new ~ ' in place and keeps every value (it also drops the columns the query no longer '
            ~ 'selects), or ' ~ rebuild ~ '.') }}
    {%- elif lakeplan.lakeplan_cast_is_lossless(new, stored) -%}
        {{ return('cast `' ~ column ~ '` to ' ~ stored ~ ' in the query, or ' ~ rebuild ~ '.') }}
    {%- endif -%}
    {{ return(lakeplan.lakeplan_upsert_rebuild(' to store `' ~ column ~ '` as ' ~ new) ~ '; casting it to ' ~ stored
        ~ ' in the query instead would turn each value ' ~ stored ~ ' cannot hold into NULL or another number, '
        ~ 'in silence.') }}
{% endmacro %}

{#- The rebuild an upsert's fixes name (`purpose`: what it is for): from its query, with the deletes its tombstones
    remember. -#}
{% macro lakeplan_upsert_rebuild(purpose='') %}
    {{ return('rebuild the table' ~ purpose ~ ': dbt run --full-refresh -s ' ~ model.name
        ~ ' (remembered deletes are kept)') }}
{% endmacro %}

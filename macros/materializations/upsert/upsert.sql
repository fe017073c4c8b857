{#- Applies a changelog (rows with +I/+U/-U/-D in `op_column`) to an Iceberg table keyed by `unique_key`:
    the latest change per key by `sequence_by` wins, -D deletes, -U is ignored, late rows never overwrite
    newer ones, also when a delete of an earlier run is newer (its tombstone, with `sequence_by`). One statement
    per run on the table: a CREATE on the first run (or --full-refresh), else one MERGE; in runs that delete, one
    before it on the tombstones' side table (macros/tombstones/). Before anything is written: an enforced contract
    and the table's `on_schema_change` are checked. Under `--empty` an existing table is not written at all. -#}
{% materialization upsert, adapter='spark' %}
    {%- set spec = lakeplan.lakeplan_validate_get_upsert_spec() -%}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set existing_relation = load_relation(this) -%}
    {%- set changes_relation = lakeplan.lakeplan_temp_view('changes') -%}

    {%- set query_columns = get_columns_in_query(compiled_code) -%}
    {%- do lakeplan.lakeplan_validate_upsert_columns(spec, query_columns) -%}
    {%- set columns = query_columns | reject('equalto', spec.op_column) | list -%}
    {%- set creates = existing_relation is none or existing_relation.is_view or lakeplan.should_full_refresh() -%}
    {%- if config.get('contract').enforced -%}
        {%- do lakeplan.lakeplan_assert_contract(spec.owner,
            'select ' ~ lakeplan.lakeplan_quote_list(columns) ~ ' from (' ~ compiled_code ~ ') as lakeplan_query',
            none if creates else target_relation,
            widens=config.get('on_schema_change') == 'sync_all_columns') -%}
    {%- endif -%}
    {%- set writes = lakeplan.lakeplan_writes(existing_relation) -%}
    {%- if not creates -%}
        {%- set columns = lakeplan.lakeplan_upsert_schema_change(spec, compiled_code, columns, target_relation, writes) -%}
    {%- endif -%}
    {#- after on_schema_change has widened what it may (under --empty nothing is altered, so nothing is compared) -#}
    {%- if not creates and writes -%}
        {%- do lakeplan.lakeplan_validate_stored_types(existing_relation, get_column_schema_from_query(compiled_code),
            'upsert `' ~ model.name ~ '`', 'its query now gives', lakeplan.lakeplan_upsert_retype_fix) -%}
    {%- endif -%}

    {{ run_hooks(pre_hooks) }}

    {#- deletes are remembered (tombstones) where a sequence can tell a late row from a newer one -#}
    {%- set tombstones = lakeplan.lakeplan_write_tombstones(target_relation, lakeplan.lakeplan_upsert_label(spec)
        ~ lakeplan.lakeplan_changelog_deletes_sql(compiled_code, spec), spec.unique_key,
        lakeplan.lakeplan_forgets_deletes(creates, existing_relation), writes) if spec.sequence_by else none -%}
    {%- call statement('stage_changes') -%}
        create or replace temporary view {{ changes_relation }} as
        {{ lakeplan.lakeplan_changelog_latest_sql(compiled_code, spec, query_columns, tombstones) }}
    {%- endcall -%}

    {%- set new_rows_read = lakeplan.lakeplan_new_rows_read() -%}
    {%- if not writes -%}
        {%- do lakeplan.lakeplan_main_without_write(lakeplan.lakeplan_empty_run_sql('select * from ' ~ changes_relation),
            'NOT WRITTEN (--empty)') -%}
    {%- elif creates -%}
        {#- Iceberg's `create or replace table` swaps the table atomically; only a view must go first -#}
        {%- if existing_relation is not none and existing_relation.is_view -%}{%- do adapter.drop_relation(existing_relation) -%}{%- endif -%}
        {%- set initial_rows -%}
            select {{ lakeplan.lakeplan_quote_list(columns) }} from {{ changes_relation }}
            where {{ lakeplan.lakeplan_quote(spec.op_column) }} != '-D'
        {%- endset -%}
        {%- call statement('main') -%}
            {{ lakeplan.lakeplan_commit_marker(target_relation) }}{{ lakeplan.lakeplan_upsert_label(spec) }}
            {{- create_table_as(False, target_relation, initial_rows) }}
        {%- endcall -%}
    {%- elif new_rows_read.nothing_new
        or new_rows_read.quiet and lakeplan.lakeplan_sends_no_rows('select 1 from ' ~ changes_relation) -%}
        {%- do lakeplan.lakeplan_log_nothing_new(new_rows_read, 'its query reads') -%}
        {%- do lakeplan.lakeplan_main_without_write('select 0 as lakeplan_rows', 'NOTHING NEW') -%}
    {%- else -%}
        {%- do lakeplan.lakeplan_log_whole_reads(model.name, lakeplan.lakeplan_compiled_sql()) -%}
        {%- set consumed = lakeplan.lakeplan_consumed_sql(target_relation, new_rows_read) -%}
        {%- for statement in consumed.before -%}{%- do lakeplan.lakeplan_execute(statement) -%}{%- endfor -%}
        {#- onto the snapshot the table was at when its consumed record was read: else another run has applied those
            changes, or newer ones, since -#}
        {%- set unmoved = lakeplan.lakeplan_unmoved_check(target_relation,
            lakeplan.lakeplan_write_base(target_relation, new_rows_read, creates)) -%}
        {%- set change = lakeplan.lakeplan_change_mode(target_relation, 'select 1 from ' ~ changes_relation) -%}
        {%- do lakeplan.lakeplan_log_change_mode(change) -%}
        {%- if change.sql -%}{%- do lakeplan.lakeplan_execute(change.sql) -%}{%- endif -%}
        {%- call statement('main') -%}
            {{ lakeplan.lakeplan_statement_options(lakeplan.lakeplan_merge_session_options(target_relation,
                change_mode=change.mode)) }}
            {{- lakeplan.lakeplan_commit_marker(target_relation) }}
            {{- lakeplan.lakeplan_upsert_label(spec) }}
            {{- lakeplan.lakeplan_upsert_merge_sql(target_relation,
                lakeplan.lakeplan_unmoved_rows(changes_relation, unmoved), spec, columns) }}
        {%- endcall -%}
        {%- do lakeplan.lakeplan_record_after_write(target_relation, consumed.after) -%}
    {%- endif -%}

    {%- if not creates -%}{%- do lakeplan.lakeplan_record_state_after_write() -%}{%- endif %}
    {#- the table's upkeep (its `maintenance`), committed apart from the write -#}
    {%- do lakeplan.lakeplan_maintain_after_write() %}
    {% do persist_docs(target_relation, model) %}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

{#- A partial-update target (FLIP-506 sink reuse): each write group of members that lakeplan's plugin
    formed is one statement and one Iceberg commit: UNION ALL of the members -> collapse -> MERGE.
    Every member and the overlaps between them are checked before anything is written. -#}
{% materialization partial_update, adapter='spark' %}
    {%- set prepared = lakeplan.lakeplan_partial_update_prepare() -%}
    {%- set target_relation = prepared.relation -%}

    {{ run_hooks(pre_hooks) }}

    {%- if prepared.creates and prepared.existing is not none and prepared.existing.is_view -%}
        {%- do adapter.drop_relation(prepared.existing) -%}
    {%- endif -%}

    {#- the steps first: a refusal they raise (leaving delta mode with delta rows) comes before any word of a repeat -#}
    {%- set steps = lakeplan.lakeplan_partial_update_steps(prepared) -%}
    {%- if prepared.applied.repeat -%}
        {%- do log('lakeplan: `' ~ model.name ~ '` already holds this run: its logic, its members\' queries and the '
            ~ 'snapshots of the tables they read are those of a write it committed (tag `' ~ prepared.applied.tag
            ~ '`), so nothing was written and no `sum` counts it twice. A new input snapshot, or --full-refresh, '
            ~ 'writes again.', info=true) -%}
    {%- endif -%}
    {%- do lakeplan.lakeplan_run_steps(steps) -%}
    {#- dbt keeps the statement named `main` in target/run/: every statement of the write, in the order they ran -#}
    {%- do write(lakeplan.lakeplan_partial_update_script(steps)) -%}

    {%- if not prepared.creates -%}{%- do lakeplan.lakeplan_record_state_after_write() -%}{%- endif %}
    {#- the table's upkeep (its `maintenance`), committed apart from the write -#}
    {%- do lakeplan.lakeplan_maintain_after_write() %}
    {%- if not prepared.creates -%}{%- do lakeplan.lakeplan_delta_compact_after_write(target_relation) -%}{%- endif %}
    {% do persist_docs(target_relation, model) %}
    {{ run_hooks(post_hooks) }}
    {#- dbt's relation cache, which ref() asks for the merged view: it learns of the views a relation returned here
        adds, and of the ones this run dropped (leaving delta mode, or a rebuild in another mode) from cache_dropped -#}
    {%- set views = [] if lakeplan.lakeplan_empty_run() else lakeplan.lakeplan_delta_views(target_relation) -%}
    {%- if lakeplan.lakeplan_plan().change_mode.mode == 'delta' -%}
        {{ return({'relations': [target_relation] + views}) }}
    {%- endif -%}
    {%- for view in views -%}{%- do adapter.cache_dropped(view) -%}{%- endfor -%}
    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

{#- What a target's write is built from, for `dbt run` and for `dbt compile`: its spec, its relation, each write
    group (`lakeplan_partial_update_write_group`: from the members' real columns, checked against each other), and whether the write creates the table
    (first run, --full-refresh, or a view in its place). -#}
{% macro lakeplan_partial_update_prepare() %}
    {%- set spec = lakeplan.lakeplan_validate_get_partial_update_spec() -%}
    {#- Spark checks a setting's value when it is set: every group's options, around a no-op, before anything
        reads a member (whose input may not be built yet, at compile time) or writes -#}
    {%- for group in spec.groups if group.write_options -%}
        {%- set origin = lakeplan.lakeplan_write_options_origin(group) -%}
        {%- do run_query(lakeplan.lakeplan_statement_options(group.write_options, origin) ~ 'select 1') -%}
    {%- endfor -%}
    {%- set existing = load_relation(this) -%}
    {%- set write_groups = [] -%}
    {%- for group in spec.groups -%}
        {%- do write_groups.append(lakeplan.lakeplan_partial_update_write_group(group, spec)) -%}
    {%- endfor -%}
    {%- do lakeplan.lakeplan_validate_partial_update_overlaps(write_groups, spec) -%}
    {%- do lakeplan.lakeplan_validate_tombstone_sequence(write_groups, spec) -%}
    {%- do lakeplan.lakeplan_check_whole_reads(write_groups, spec) -%}
    {%- set creates = existing is none or existing.is_view or lakeplan.should_full_refresh() -%}
    {%- if creates and existing is not none and not existing.is_view -%}
        {%- do lakeplan.lakeplan_check_partition_widths(existing) -%}
    {%- endif -%}
    {#- the table is created with the declared types and every member value is cast to them (checked above): an
        enforced contract adds that a kept table holds those types (its error first: it names the contract), or
        narrower ones Iceberg widens in place, which a write (not compile, not --empty) widens before it writes -#}
    {%- if config.get('contract').enforced and not creates -%}
        {%- do lakeplan.lakeplan_assert_contract(spec.owner, none, this, widens=true) -%}
    {%- endif -%}
    {%- if not creates -%}
        {%- set declared = [] -%}
        {%- for column in spec.columns -%}{%- do declared.append({'name': column.name, 'dtype': column.data_type}) -%}{%- endfor -%}
        {%- set widened = lakeplan.lakeplan_validate_stored_types(existing, declared, spec.owner,
            'its YAML now declares', 'set its data_type back to {stored}, or rebuild the table with `dbt run -s '
            ~ spec.model ~ ' --full-refresh` (from this run\'s rows alone).', widens=true) -%}
        {%- if widened and lakeplan.lakeplan_state_check_applies() -%}
            {%- do lakeplan.lakeplan_widen_stored_columns(existing, widened, spec.owner) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return({'spec': spec, 'relation': this.incorporate(type='table'), 'existing': existing, 'write_groups': write_groups,
        'creates': creates, 'applied': lakeplan.lakeplan_partial_update_applied(write_groups, spec, existing, creates)}) }}
{% endmacro %}

{#- What `dbt compile` shows for a target: the statements `dbt run` would send now, built by the same macros from
    the members' real columns (plugins/dbt_lakeplan/compiled_write.py renders it once dbt has compiled the
    members into the target). Nothing is written: this run's tombstones are counted, not recorded. -#}
{% macro lakeplan_partial_update_compiled() %}
    {%- set prepared = lakeplan.lakeplan_partial_update_prepare() -%}
    {%- set steps = lakeplan.lakeplan_partial_update_steps(prepared, record=false) -%}
    {%- set tombstones = prepared.spec.tombstones -%}
    {%- set comment -%}
-- `dbt run` of `{{ model.name }}` would send these statements now, built from its members' real columns and the table
-- as it is. Each write group is one statement; each `/* collapse ... */` names a column group's collapse strategy.
{%- if tombstones %}
-- Before them, the run records this run's deletes in {{ tombstones }}.
{%- endif %}
    {%- endset -%}
    {{ return(comment ~ '\n' ~ lakeplan.lakeplan_partial_update_script(steps)) }}
{% endmacro %}

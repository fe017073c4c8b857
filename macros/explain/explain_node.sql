{#- What `lakeplan explain` (plugins/dbt_lakeplan/explain_dbt.py) reads of one compiled model in its runtime context,
    without writing: the statements Spark is to plan, the state verdict the next run would reach (and whether it
    finds nothing new to write), the real layout of each keyed input, and a target's delta rows (change_mode delta).
    {statements, state, keyed_inputs, delta};
    `statements` none: plan the compiled code as it is (a partial-update target's compiled code is its write
    already). -#}
{% macro lakeplan_explain_node() %}
    {%- set verdict = lakeplan.lakeplan_state_verdict(model) -%}
    {%- set stored = verdict.get('stored') or {} -%}
    {{ return({
        'statements': lakeplan.lakeplan_explain_statements(),
        'state': {'action': verdict.action, 'message': verdict.get('message'), 'stored': stored.get('fingerprint'),
                  'exists': verdict.get('relation') is not none,
                  'changes': verdict.get('changes', []),
                  'nothing_new': lakeplan.lakeplan_new_rows_read().nothing_new},
        'keyed_inputs': lakeplan.lakeplan_explain_keyed_inputs(),
        'delta': lakeplan.lakeplan_explain_delta(),
    }) }}
{% endmacro %}

{#- A target in change_mode delta: the delta rows its table holds and the runs they came from (none: another mode;
    zeros: no table yet, or it was built in another mode). -#}
{% macro lakeplan_explain_delta() %}
    {%- set change_mode = lakeplan.lakeplan_plan().change_mode -%}
    {%- if not change_mode or change_mode.mode != 'delta' -%}{{ return(none) }}{%- endif -%}
    {%- set existing = load_relation(this) -%}
    {%- if not lakeplan.lakeplan_in_delta_layout(existing) -%}{{ return({'rows': 0, 'runs': 0}) }}{%- endif -%}
    {%- set counted = lakeplan.lakeplan_delta_size(existing) -%}
    {#- the merged read groups by the key: without a shuffle only on a table bucketed by it -#}
    {%- set layout = lakeplan.lakeplan_table_layout(existing) -%}
    {{ return({'rows': counted.rows, 'runs': counted.runs, 'layout': layout.text, 'keyed':
        (layout.bucketed_by or []) | map('lower') | list == lakeplan.lakeplan_plan().key | map('lower') | list,
        'partition_by': config.get('partition_by')}) }}
{% endmacro %}

{#- What `dbt run` of the model would send that Spark can plan: an upsert's staged changes (a temporary view) and its
    MERGE, or its CREATE on a first run; a table's query with its write distribution; any other model's query.
    An upsert's tombstones are read where their side table exists, never written. -#}
{% macro lakeplan_explain_statements() %}
    {%- set kind = lakeplan.lakeplan_plan().kind -%}
    {%- if kind.target -%}{{ return(none) }}{%- endif -%}
    {%- if not kind.changelog -%}
        {{ return([lakeplan.lakeplan_sink_distribution(compiled_code) if kind.table else compiled_code]) }}
    {%- endif -%}
    {%- set spec = lakeplan.lakeplan_validate_get_upsert_spec() -%}
    {%- set existing = load_relation(this) -%}
    {%- set creates = existing is none or existing.is_view -%}
    {%- set changes = lakeplan.lakeplan_temp_view('changes') -%}
    {%- set query_columns = get_columns_in_query(compiled_code) -%}
    {%- set columns = query_columns | reject('equalto', spec.op_column) | list -%}
    {%- set side_table = lakeplan.lakeplan_tombstone_relation(this) -%}
    {%- set tombstones = side_table if spec.sequence_by and not creates and load_relation(side_table) else none -%}
    {%- set stage = 'create or replace temporary view ' ~ changes ~ ' as '
        ~ lakeplan.lakeplan_changelog_latest_sql(compiled_code, spec, query_columns, tombstones) -%}
    {%- if creates -%}
        {%- set write = create_table_as(False, this.incorporate(type='table'), 'select '
            ~ lakeplan.lakeplan_quote_list(columns) ~ ' from ' ~ changes ~ ' where '
            ~ lakeplan.lakeplan_quote(spec.op_column) ~ " != '-D'") -%}
    {%- else -%}
        {%- set write = lakeplan.lakeplan_statement_options(lakeplan.lakeplan_merge_session_options(this))
            ~ lakeplan.lakeplan_upsert_merge_sql(this, changes, spec, columns) -%}
    {%- endif -%}
    {{ return([stage, write]) }}
{% endmacro %}

{#- Each keyed input of the model (a keyed model or pre-keyed source) with its declared and its real layout. -#}
{% macro lakeplan_explain_keyed_inputs() %}
    {%- set inputs = [] -%}
    {%- for unique_id in model.depends_on.nodes if unique_id in graph.nodes or unique_id in graph.sources -%}
        {%- set node = graph.nodes.get(unique_id) or graph.sources.get(unique_id) -%}
        {%- set keyed = (node.config.get('lakeplan_plan') or {}).get('keyed') -%}
        {%- if keyed -%}
            {%- set identifier = node.identifier if node.resource_type == 'source' else node.alias -%}
            {%- set relation = adapter.get_relation(node.database, node.schema, identifier) -%}
            {%- do inputs.append({'unique_id': unique_id, 'keys': keyed['keys'], 'key_groups': keyed.key_groups,
                'layout': lakeplan.lakeplan_table_layout(relation) if relation is not none else none}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(inputs) }}
{% endmacro %}

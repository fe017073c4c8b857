{#- An `upsert` model's settings, from its plan: {owner, model, unique_key: [..], sequence_by, op_column}. -#}
{% macro lakeplan_validate_get_upsert_spec() %}
    {%- set plan = lakeplan.lakeplan_plan() -%}
    {{ return({
        'owner': 'model `' ~ model.name ~ '`',
        'model': model.name,
        'unique_key': plan.key,
        'sequence_by': plan.upsert.sequence_by,
        'op_column': plan.upsert.op_column,
    }) }}
{% endmacro %}

{#- Raises when the model's query lacks a column the upsert needs. -#}
{% macro lakeplan_validate_upsert_columns(spec, columns) %}
    {%- set needed = [('unique_key', spec.unique_key)] + ([('sequence_by', [spec.sequence_by])] if spec.sequence_by
        else []) -%}
    {%- do lakeplan.lakeplan_check_named_columns(needed, columns,
        spec.owner ~ ' sets `{setting}` to `{column}`, which its query does not select.',
        'select that column from the changelog source, or name a selected column in `{setting}`.') -%}
    {#- a user who set no op_column meets its default here -#}
    {%- do lakeplan.lakeplan_check_named_columns([('op_column', [spec.op_column])], columns,
        spec.owner ~ (' sets `{setting}` to `{column}`' if config.get('op_column') is not none
            else ' sets no `{setting}`, so it reads each row\'s kind from `{column}` (the default)')
        ~ ', which its query does not select.',
        'select each row\'s kind as `' ~ spec.op_column ~ '` (`\'+I\' as ' ~ spec.op_column ~ '` where every row '
        ~ 'inserts or updates its key; \'-D\' deletes it), or name a selected column in `{setting}`.') -%}
{% endmacro %}

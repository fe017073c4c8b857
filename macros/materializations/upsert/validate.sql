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
    {%- set needed = [('unique_key', spec.unique_key), ('op_column', [spec.op_column])]
        + ([('sequence_by', [spec.sequence_by])] if spec.sequence_by else []) -%}
    {%- set missing = lakeplan.lakeplan_missing_column(needed, columns) -%}
    {%- if missing -%}
        {%- do exceptions.raise_compiler_error(
            spec.owner ~ ' sets `' ~ missing[0] ~ '` to `' ~ missing[1] ~ '`, which its query does not select.\n'
            ~ 'Its columns: ' ~ columns | join(', ') ~ '.\n'
            ~ 'Fix: select that column from the changelog source, or name a selected column in `' ~ missing[0] ~ '`.') -%}
    {%- endif -%}
{% endmacro %}

{#- The validated settings of an `upsert` model: {unique_key: [..], sequence_by, op_column}. -#}
{% macro lakeplan_validate_get_upsert_spec() %}
    {%- set owner = 'model `' ~ model.name ~ '`' -%}
    {%- set unique_key = lakeplan.lakeplan_name_list(config.get('unique_key'), owner, 'unique_key') -%}
    {%- if not unique_key -%}
        {%- set missing_key_msg -%}
{{ owner }} is materialized as `upsert` but has no `unique_key`.
An upsert applies a changelog per primary key: the key decides which row an update or delete replaces.
Fix: add `unique_key` (the changelog source's primary_key) to the model's config.
        {%- endset -%}
        {%- do exceptions.raise_compiler_error(missing_key_msg) -%}
    {%- endif -%}
    {%- set file_format = config.get('file_format') -%}
    {%- if file_format != 'iceberg' -%}
        {%- do exceptions.raise_compiler_error(
            owner ~ ' is materialized as `upsert` with file_format ' ~ file_format | tojson ~ '.\n'
            ~ 'The upsert MERGEs into the table, which needs a table format with row-level updates.\n'
            ~ 'Fix: set `file_format: iceberg`.') -%}
    {%- endif -%}
    {{ return({
        'owner': owner,
        'model': model.name,
        'unique_key': unique_key,
        'sequence_by': config.get('sequence_by'),
        'op_column': config.get('op_column', '_op'),
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

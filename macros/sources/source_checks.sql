{#- The source table node that `source(source_name, table_name)` resolves to. -#}
{% macro lakeplan_source_node(source_name, table_name) %}
    {% for node in graph.sources.values() if node.source_name == source_name and node.name == table_name %}
        {{ return(node) }}
    {% endfor %}
    {% do exceptions.raise_compiler_error(
        "Source `" ~ source_name ~ "." ~ table_name ~ "` is not defined in any sources YAML.") %}
{% endmacro %}

{#- Raises when a setting names a column the source does not have (compared case-insensitively, as Spark does). -#}
{% macro lakeplan_check_source_columns(spec, columns) %}
    {%- set settings = [('primary_key', spec.primary_key)] -%}
    {%- if spec.sequence_by -%}{%- do settings.append(('sequence_by', [spec.sequence_by])) -%}{%- endif -%}
    {%- if spec.changelog_mode != 'insert_only' -%}
        {%- do settings.append(('op_column', [spec.op_column])) -%}
    {%- endif -%}
    {%- do lakeplan.lakeplan_check_named_columns(settings, columns,
        spec.owner ~ ' sets `meta.{setting}` to a column it does not have: `{column}`.',
        'name one of those columns in `{setting}`, or add the column to the source.') -%}
{% endmacro %}

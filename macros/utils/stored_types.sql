{#- A table written again must take each new value as it is: where a column's new type (`columns`: [{name, dtype}],
    what the YAML declares or the query gives) does not fit the stored column without a cast that may lose a value,
    Spark refuses the write with "Cannot write incompatible data for the table ''", naming neither the model nor the
    column. This says which, with both types and `fix` (where `{column}` and `{stored}` stand for the column and its
    stored type), before anything is written. -#}
{% macro lakeplan_validate_stored_types(relation, columns, owner, new_type_source, fix) %}
    {%- set stored = {} -%}
    {%- for column in adapter.get_columns_in_relation(relation) -%}
        {%- do stored.update({column.name | lower: column.dtype}) -%}
    {%- endfor -%}
    {%- for column in columns if column.name | lower in stored -%}
        {%- set stored_type = stored[column.name | lower] -%}
        {#- every atomic value has a text; lakeplan_cast_is_lossless asks the partial-update plan's families for it -#}
        {%- if lakeplan.lakeplan_normal_type(stored_type) != 'string'
            and not lakeplan.lakeplan_cast_is_lossless(column.dtype, stored_type) -%}
            {%- do exceptions.raise_compiler_error('Column `' ~ column.name ~ '` of ' ~ owner ~ ' is stored as '
                ~ stored_type ~ ', but ' ~ new_type_source ~ ' ' ~ column.dtype ~ ', which the table cannot take '
                ~ 'without a cast that may lose values; `' ~ model.name ~ '` is unchanged.\nFix: ' ~ fix | replace('{column}', column.name) | replace('{stored}', stored_type)) -%}
        {%- endif -%}
    {%- endfor -%}
{% endmacro %}

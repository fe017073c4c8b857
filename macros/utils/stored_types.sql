{#- A table written again must take each new value as it is: where a column's new type (`columns`: [{name, dtype}],
    what the YAML declares or the query gives) does not fit the stored column without a cast that may lose a value,
    Spark refuses the write with "Cannot write incompatible data for the table ''", naming neither the model nor the
    column. This says which, with both types and `fix` (where `{column}` and `{stored}` stand for the column and its
    stored type; or a macro that returns the fix for (column, stored type, new type)), before anything is written.
    With `widens`, a column whose stored type Iceberg widens in place to the new one is not refused but returned:
    [{name, stored, dtype}] (lakeplan_widen_stored_columns widens them); one whose new type is narrower than the
    stored one (kept by accepting the state) is written, and the log says that the table keeps its wider type. -#}
{% macro lakeplan_validate_stored_types(relation, columns, owner, new_type_source, fix, widens=false) %}
    {%- set stored, widened = {}, [] -%}
    {%- for column in adapter.get_columns_in_relation(relation) -%}
        {%- do stored.update({column.name | lower: column.dtype}) -%}
    {%- endfor -%}
    {%- for column in columns if column.name | lower in stored -%}
        {%- set stored_type = stored[column.name | lower] -%}
        {#- a type Iceberg stores under another (a varchar(n) as string) is the stored one: nothing to tell or widen -#}
        {%- set retyped = lakeplan.lakeplan_normal_type(stored_type) != lakeplan.lakeplan_iceberg_type(column.dtype) -%}
        {%- if widens and retyped and lakeplan.lakeplan_iceberg_widens(stored_type, column.dtype) -%}
            {%- do widened.append({'name': column.name, 'stored': stored_type, 'dtype': column.dtype}) -%}
        {%- elif widens and retyped and lakeplan.lakeplan_cast_is_lossless(column.dtype, stored_type) -%}
            {%- do log('lakeplan: column `' ~ column.name ~ '` of ' ~ owner ~ ' is stored as ' ~ stored_type ~ ', but '
                ~ new_type_source ~ ' ' ~ column.dtype ~ ': the table keeps ' ~ stored_type ~ ' (Iceberg never narrows '
                ~ 'a column in place) and takes values of ' ~ column.dtype ~ '. To store ' ~ column.dtype ~ ', rebuild '
                ~ 'the table: dbt run -s ' ~ model.name ~ ' --full-refresh.', info=true) -%}
        {#- every atomic value has a text -#}
        {%- elif lakeplan.lakeplan_normal_type(stored_type) != 'string'
            and not lakeplan.lakeplan_cast_is_lossless(column.dtype, stored_type) -%}
            {%- do exceptions.raise_compiler_error('Column `' ~ column.name ~ '` of ' ~ owner ~ ' is stored as '
                ~ stored_type ~ ', but ' ~ new_type_source ~ ' ' ~ column.dtype ~ ', which the table cannot take '
                ~ 'without a cast that may lose values; `' ~ model.name ~ '` is unchanged. Fix: '
                ~ (fix | replace('{column}', column.name) | replace('{stored}', stored_type) if fix is string
                else fix(column.name, stored_type, column.dtype))) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(widened) }}
{% endmacro %}

{#- Widens `columns` ([{name, stored, dtype}] of lakeplan_validate_stored_types) in place: Iceberg keeps every
    stored value (a metadata change, no data file rewritten), so the table takes values of the declared type. -#}
{% macro lakeplan_widen_stored_columns(relation, columns, owner) %}
    {%- for column in columns -%}
        {%- do alter_column_type(relation, lakeplan.lakeplan_quote(column.name), column.dtype) -%}
        {%- do log('lakeplan: ' ~ owner ~ ' widened its stored column `' ~ column.name ~ '` from ' ~ column.stored
            ~ ' to ' ~ column.dtype ~ ', as its YAML now declares; every stored value is kept.', info=true) -%}
    {%- endfor -%}
{% endmacro %}

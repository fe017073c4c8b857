{#- An enforced contract (`contract: {enforced: true}`) on lakeplan's materializations, checked before anything
    is written: `sql`, the rows the model writes, must have the contract's column names and data types (dbt's own
    assert_columns_equivalent, as dbt-spark's table does), and a `relation` that already exists must hold every
    contract column it has with the contract's type as Iceberg stores it (a tinyint as an int; with `widens`: or a
    narrower type Iceberg widens in place, which the write widens first): a MERGE would otherwise cast into the old
    type in silence. Without `widens` (an `upsert` not under sync_all_columns), such a type is refused with the
    setting that widens it. -#}
{% macro lakeplan_assert_contract(owner, sql, relation=none, widens=false) %}
    {%- if sql -%}{%- do get_assert_columns_equivalent(sql) -%}{%- endif -%}
    {%- if relation is none -%}{{ return(none) }}{%- endif -%}
    {%- set declared = {} -%}
    {%- for column in format_columns(get_column_schema_from_query(get_empty_schema_sql(model.columns))) -%}
        {%- do declared.update({column.name | lower: column.data_type}) -%}
    {%- endfor -%}
    {%- for column in format_columns(get_column_schema_from_query('select * from ' ~ relation))
        if column.name | lower in declared
        and lakeplan.lakeplan_iceberg_type(declared[column.name | lower]) != lakeplan.lakeplan_normal_type(column.data_type)
        and not (widens and lakeplan.lakeplan_iceberg_widens(column.data_type, declared[column.name | lower])) -%}
        {%- do exceptions.raise_compiler_error(
            owner ~ ' has an enforced contract declaring `' ~ column.name ~ '` ' ~ declared[column.name | lower]
            ~ ', but its table ' ~ relation ~ ' holds `' ~ column.name ~ '` as ' ~ column.data_type
            ~ ' (built before the contract, or before the type changed); nothing was written. Fix: '
            ~ (lakeplan.lakeplan_upsert_retype_fix(column.name, column.data_type, declared[column.name | lower])
            if lakeplan.lakeplan_iceberg_widens(column.data_type, declared[column.name | lower]) else 'rebuild the '
            ~ 'table with the declared types: dbt run --full-refresh -s ' ~ model.name
            ~ ' (remembered deletes are kept).')) -%}
    {%- endfor -%}
{% endmacro %}

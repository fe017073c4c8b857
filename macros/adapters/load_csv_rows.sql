{#- dbt-spark's seed insert, with every value written as a literal: an empty cell is `null`, never the text
    'None' that dbt-spark's session method makes of a binding (dbt-spark #901), on every connection method. -#}
{% macro spark__load_csv_rows(model, agate_table) %}
    {%- set column_override = model['config'].get('column_types', {}) -%}
    {%- set types = [] -%}
    {%- for column_name in agate_table.column_names -%}
        {%- do types.append(column_override.get(column_name, adapter.convert_type(agate_table, loop.index0))) -%}
    {%- endfor -%}
    {%- set statements = [] -%}
    {%- for chunk in agate_table.rows | batch(get_batch_size()) -%}
        {%- set values = [] -%}
        {%- for row in chunk -%}
            {%- set cells = [] -%}
            {%- for value in row -%}
                {%- set literal = 'null' if value is none else lakeplan.lakeplan_string_literal(value) -%}
                {%- do cells.append('cast(' ~ literal ~ ' as ' ~ types[loop.index0] ~ ')') -%}
            {%- endfor -%}
            {%- do values.append('(' ~ cells | join(', ') ~ ')') -%}
        {%- endfor -%}
        {%- set sql = 'insert into ' ~ this.render() ~ ' values\n' ~ values | join(',\n') -%}
        {%- do adapter.add_query(sql, abridge_sql_log=True) -%}
        {%- do statements.append(sql) -%}
    {%- endfor -%}
    {{ return(statements[0] if statements else '') }}
{% endmacro %}

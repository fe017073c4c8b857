{#- dbt-spark's seed insert, with every value written as a literal: an empty cell is `null`, never the text
    'None' that dbt-spark's session method makes of a binding (dbt-spark #901), on every connection method. Nothing
    for a seed spark__reset_csv_table kept; else the load ends by recording the seed's digest on the table. -#}
{% macro spark__load_csv_rows(model, agate_table) %}
    {%- if lakeplan.lakeplan_invocation_cache('lakeplan_seeds_kept').get(this | string) -%}{{ return('') }}{%- endif -%}
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
    {%- set digest = lakeplan.lakeplan_seed_digest(model) -%}
    {%- if digest -%}
        {%- do adapter.add_query('alter table ' ~ this.render() ~ ' set tblproperties ('
            ~ lakeplan.lakeplan_properties_sql({'lakeplan.seed': digest}) ~ ')', auto_begin=false) -%}
    {%- endif -%}
    {{ return(statements[0] if statements else '') }}
{% endmacro %}

{#- dbt-spark drops a seed's table and creates it again on every `dbt seed`: a new table, whose history starts over, so
    a model reading it with new_rows would read it whole each time, and its write would rewrite the rows it already
    holds. A seed whose digest (lakeplan_seed_digest) is the one its table records is kept as it is (not under
    --full-refresh): nothing is loaded, and its snapshot stays the one its readers consumed. -#}
{% macro spark__reset_csv_table(model, full_refresh, old_relation, agate_table) %}
    {%- set digest = lakeplan.lakeplan_seed_digest(model) -%}
    {%- if digest and old_relation and not full_refresh
        and lakeplan.lakeplan_read_table_properties(old_relation).get('lakeplan.seed') == digest -%}
        {%- do lakeplan.lakeplan_invocation_cache('lakeplan_seeds_kept').update({this | string: true}) -%}
        {%- do log('lakeplan: seed `' ~ model.name ~ '` is as its table ' ~ this ~ ' was loaded (same CSV and '
            ~ 'settings), so the table is kept as it is: models that read it with new_rows find nothing new.',
            info=true) -%}
        {{ return('') }}
    {%- endif -%}
    {%- if old_relation -%}{%- do adapter.drop_relation(old_relation) -%}{%- endif -%}
    {{ return(create_csv_table(model, agate_table)) }}
{% endmacro %}

{#- What a seed's table is loaded from: dbt's checksum of its CSV and its config (column types, delimiter, table
    settings), as one md5; none for a CSV over 1 MB, which dbt checksums by its path only, so it is loaded every
    time. -#}
{% macro lakeplan_seed_digest(model) %}
    {%- if model.checksum.name != 'sha256' -%}{{ return(none) }}{%- endif -%}
    {{ return(local_md5(model.checksum.checksum ~ tojson(model.config, sort_keys=true))) }}
{% endmacro %}

{#- The statement that writes one group's collapsed rows (strategies.sql builds them) into the target. -#}

{#- The MERGE of one group: only the group's columns change, each by its merge rule or sequence group;
    remove_record deletes. -#}
{% macro lakeplan_partial_update_merge_sql(target, source, write_group, spec) %}
    {%- set matches = lakeplan.lakeplan_key_matches('lakeplan_table', 'lakeplan_change', spec.unique_key) -%}
    {%- set keys = spec.unique_key | map('lower') | list -%}
    {%- set keep, replace, names, values = [], [], [], [] -%}
    {%- for column in spec.columns -%}
        {%- set name = lakeplan.lakeplan_quote(column.name) -%}
        {%- set change, stored = 'lakeplan_change.' ~ name, 'lakeplan_table.' ~ name -%}
        {%- set sequence = spec.grouped.get(column.name | lower) -%}
        {%- do names.append(name) -%}
        {%- do values.append(change) -%}
        {%- do replace.append(name ~ ' = ' ~ change) -%}
        {%- if sequence in write_group.written -%}
            {%- do keep.append(name ~ ' = case when ' ~ lakeplan.lakeplan_sequence_group_accepts(sequence) ~ ' then ' ~ change
                ~ ' else ' ~ stored ~ ' end') -%}
        {%- elif column.name | lower in write_group.written and column.name | lower not in keys -%}
            {%- do keep.append(name ~ ' = ' ~ lakeplan.lakeplan_merge_rule_combine(
                spec.merge_rules[spec.rules[column.name | lower]], stored, change, column.data_type,
                'lakeplan_change.' ~ lakeplan.lakeplan_quote('lakeplan_written_' ~ column.name),
                spec.delimiters.get(column.name | lower), lakeplan.lakeplan_merge_rule_overflow(spec, column, 'lakeplan_table.'))) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set clauses = [] -%}
    {%- if write_group.changelog and spec.on_delete == 'remove_record' -%}
        {%- do clauses.append('when matched and lakeplan_change.lakeplan_deleted and not lakeplan_change.lakeplan_alive'
            ~ ' then delete') -%}
        {%- do clauses.append(
            'when matched and lakeplan_change.lakeplan_deleted then update set ' ~ replace | join(', ')) -%}
    {%- endif -%}
    {%- if keep -%}{%- do clauses.append('when matched then update set ' ~ keep | join(', ')) -%}{%- endif -%}
    {%- do clauses.append('when not matched and lakeplan_change.lakeplan_alive then insert ('
        ~ names | join(', ') ~ ') values (' ~ values | join(', ') ~ ')') -%}
    {{ return('merge into ' ~ target ~ ' as lakeplan_table using ' ~ source ~ ' as lakeplan_change\non '
        ~ matches ~ '\n' ~ clauses | join('\n')) }}
{% endmacro %}

{#- write_mode overwrite: the group's rows replace the table, or the static partition it names. -#}
{% macro lakeplan_partial_update_overwrite_sql(target, source, write_group, spec) %}
    {%- set static = write_group.group.static_partition -%}
    {%- set fixed = static.keys() | map('lower') | list -%}
    {%- set partition = [] -%}
    {%- for name, value in static.items() -%}
        {%- do partition.append(lakeplan.lakeplan_quote(name) ~ ' = ' ~ lakeplan.lakeplan_string_literal(value)) -%}
    {%- endfor -%}
    {%- set written = [] -%}
    {%- for name in spec.columns | map(attribute='name') if name | lower not in fixed -%}
        {%- do written.append(lakeplan.lakeplan_quote(name)) -%}
    {%- endfor -%}
    {%- set partition_clause = ' partition (' ~ partition | join(', ') ~ ')' if partition else '' -%}
    {{ return('insert overwrite ' ~ target ~ partition_clause ~ '\nselect ' ~ written | join(', ')
        ~ ' from ' ~ source ~ ' as lakeplan_change where lakeplan_alive') }}
{% endmacro %}

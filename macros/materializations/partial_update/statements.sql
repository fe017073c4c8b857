{#- The statement that writes one group's collapsed rows (strategies.sql builds them) into the target. -#}

{#- The MERGE of one group: only the group's columns change, each by its merge rule or sequence group;
    remove_record deletes. -#}
{% macro lakeplan_partial_update_merge_sql(target, source, write_group, spec) %}
    {%- set matches = lakeplan.lakeplan_key_matches('lakeplan_table', 'lakeplan_change', spec.unique_key) -%}
    {%- set keep, replace, names, values = [], [], [], [] -%}
    {%- for column in spec.columns -%}
        {%- set name = lakeplan.lakeplan_quote(column.name) -%}
        {%- set change = 'lakeplan_change.' ~ name -%}
        {%- do names.append(name) -%}
        {%- do values.append(change) -%}
        {%- do replace.append(name ~ ' = ' ~ change) -%}
        {%- if lakeplan.lakeplan_partial_update_changes(column, write_group.written, spec) -%}
            {%- do keep.append(name ~ ' = ' ~ lakeplan.lakeplan_partial_update_combined(column, spec)) -%}
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

{#- Whether a change that wrote the columns `written` (lower-case names) changes `column` of a stored row: a column
    of a sequence group it wrote, or a column it wrote that is no key. -#}
{% macro lakeplan_partial_update_changes(column, written, spec) %}
    {%- set name = column.name | lower -%}
    {%- set keys = spec.unique_key | map('lower') | list -%}
    {{ return(spec.grouped.get(name) in written or name in written and name not in keys) }}
{% endmacro %}

{#- A column's new value where a change that wrote it meets the stored row: its sequence group's accepted row, or its
    merge rule's combine. `lakeplan_table` and `lakeplan_change` are the stored row and the change: the MERGE's
    aliases, and the arguments of the delta's fold (delta.sql), so a rule is applied by one piece of SQL. -#}
{% macro lakeplan_partial_update_combined(column, spec) %}
    {%- set name = lakeplan.lakeplan_quote(column.name) -%}
    {%- set change, stored = 'lakeplan_change.' ~ name, 'lakeplan_table.' ~ name -%}
    {%- set sequence = spec.grouped.get(column.name | lower) -%}
    {%- if sequence -%}
        {{ return('case when ' ~ lakeplan.lakeplan_sequence_group_accepts(sequence) ~ ' then ' ~ change ~ ' else '
            ~ stored ~ ' end') }}
    {%- endif -%}
    {{ return(lakeplan.lakeplan_merge_rule_combine(spec.merge_rules[spec.rules[column.name | lower]], stored, change,
        column.data_type, 'lakeplan_change.' ~ lakeplan.lakeplan_quote('lakeplan_written_' ~ column.name),
        spec.delimiters.get(column.name | lower), lakeplan.lakeplan_merge_rule_overflow(spec, column, 'lakeplan_table.'))) }}
{% endmacro %}

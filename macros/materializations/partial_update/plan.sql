{#- Everything one write group needs, from the real member schemas: each member's temp view (its query
    with the CTEs dbt compiled into this target), its columns, and what it writes; checked on the way. -#}
{% macro lakeplan_partial_update_plan(group, spec) %}
    {%- set ctes = model.extra_ctes | map(attribute='sql') | list -%}
    {%- set with_clause = 'with ' ~ ctes | join(',\n') ~ '\n' if ctes else '' -%}
    {%- set members = [] -%}
    {%- set sequence_types = [] -%}
    {%- for member in group.members -%}
        {%- set view = lakeplan.lakeplan_temp_view('member_' ~ member.name) -%}
        {%- call statement('stage_member_' ~ member.name) -%}
            create or replace temporary view {{ view }} as {{ with_clause }}select * from {{ ref(member.name) }}
        {%- endcall -%}
        {%- set columns = adapter.get_columns_in_relation(view) -%}
        {%- do lakeplan.lakeplan_validate_partial_update_member(member, columns, spec) -%}
        {#- the op column is never data; the sequence column is written where the target has it -#}
        {%- set target_columns = spec.columns | map(attribute='name') | map('lower') | list -%}
        {%- set written = [] -%}
        {%- for column in columns if column.name | lower in target_columns
            and column.name | lower != (member.op_column or '') | lower -%}
            {%- do written.append(column.name) -%}
        {%- endfor -%}
        {%- for column in columns if member.sequence_by and column.name | lower == member.sequence_by | lower -%}
            {%- do sequence_types.append(column.dtype) -%}
        {%- endfor -%}
        {%- do members.append({'config': member, 'view': view, 'written': written}) -%}
    {%- endfor -%}
    {%- set sequence_type = (sequence_types | first) or 'bigint' -%}
    {%- set written = [] -%}
    {%- for member in members -%}{%- do written.extend(member.written | map('lower')) -%}{%- endfor -%}
    {{ return({
        'group': group,
        'members': members,
        'written': written | unique | list,
        'changelog': group.members | selectattr('op_column') | list | length > 0,
        'sequence_type': sequence_type,
        'order_type': 'struct<sequence:' ~ sequence_type ~ ',member:int>',
    }) }}
{% endmacro %}

{#- One group's write: one MERGE (or INSERT OVERWRITE) reading the collapsed rows as a subquery, with the
    group's `write_options` set for that statement only. Not a staged temp view: Spark keeps a temp view as
    SQL text and analyses it again in the MERGE, which at 100+ columns costs seconds. -#}
{% macro lakeplan_partial_update_write(target, plan, spec, statement_name) %}
    {%- set source = '(\n' ~ lakeplan.lakeplan_sink_distribution_by(
        lakeplan.lakeplan_partial_update_collapse_sql(plan, spec),
        plan.group.parallelism, spec.unique_key) ~ '\n)' -%}
    {%- set previous = lakeplan.lakeplan_set_session_options(plan.group.write_options) -%}
    {%- call statement(statement_name) -%}
        {%- if plan.group.write_mode == 'overwrite' -%}
            {{ lakeplan.lakeplan_partial_update_overwrite_sql(target, source, plan, spec) }}
        {%- else -%}
            {{ lakeplan.lakeplan_partial_update_merge_sql(target, source, plan, spec) }}
        {%- endif -%}
    {%- endcall -%}
    {%- do lakeplan.lakeplan_set_session_options(previous) -%}
{% endmacro %}

{#- The empty target table with its declared columns and types (a DDL: no snapshot of its own). -#}
{% macro lakeplan_partial_update_create_sql(relation, spec) %}
    {%- set columns = [] -%}
    {%- for column in spec.columns -%}
        {%- do columns.append(lakeplan.lakeplan_quote(column.name) ~ ' ' ~ column.data_type) -%}
    {%- endfor %}
    create or replace table {{ relation }} ({{ columns | join(', ') }})
    {{ file_format_clause() }}
    {{ partition_cols(label="partitioned by") }}
    {{ tblproperties_clause() }}
    {{ location_clause() }}
    {{ comment_clause() }}
{% endmacro %}

{#- A member's op and sequence columns (lower case): they order and classify rows, they are not written. -#}
{% macro lakeplan_member_control_columns(member) %}
    {{ return([member.op_column, member.sequence_by] | select | map('lower') | list) }}
{% endmacro %}

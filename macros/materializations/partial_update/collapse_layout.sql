{#- The collapse strategy of each column group of a unioned partial-update write (strategies.sql builds the
    statement): packed per member, or column by column. -#}

{#- How each column group collapses. A member that sends at most one row per key (the duplicate check in strategies.sql
    stops the write otherwise), without sequence, op column or remove_record, packs the columns it alone writes
    and whose rule takes a single row's value as it is into one struct, `lakeplan_pack_<position>`: one struct
    per row instead of a typed NULL per column of every other member, one aggregate per member instead of one
    per column (max, or first where a field is a map), unpacked after the group-by. Every other column
    collapses column by column, also a member's single packable column and the columns of a group's only member
    (no other member's NULLs to spare, so a struct gains nothing); `reasons` says why, for the statement's comments.
    Where every member sends at most one row per key, aggregating before the shuffle merges nothing (a
    member's rows sit in partitions of their own), and an aggregate over a struct (a pack) takes Spark onto
    sorting every row, there and again after the shuffle: the rows are then hash-distributed on the key first
    (`shuffled`), one shuffle and one sort (docs/benchmarks.md, section 1).
    {packs: [{member, name, type, columns, aggregate}], packed: {column: field}, shuffled: bool,
    reasons: {column: why it collapses column by column}}. -#}
{% macro lakeplan_partial_update_layout(write_group, spec) %}
    {%- set key_names = spec.unique_key | map('lower') | list -%}
    {%- set removes = write_group.changelog and spec.on_delete == 'remove_record' -%}
    {%- set writes = [] -%}
    {%- for member in write_group.members -%}{%- do writes.extend(member.written | map('lower')) -%}{%- endfor -%}
    {%- set packs, packed, reasons, one_row = [], {}, {}, [] -%}
    {%- for member in write_group.members -%}
        {%- set position = loop.index -%}
        {%- set unpackable = 'the only member of its group' if write_group.members | length == 1
            else 'on_delete: remove_record' if removes
            else 'ordered by sequence_by' if member.config.sequence_by
            else 'a changelog member' if member.config.op_column
            else 'order-free rules, several rows per key allowed'
                if not lakeplan.lakeplan_partial_update_ordered_columns(member, spec) else '' -%}
        {%- if not unpackable -%}{%- do one_row.append(member) -%}{%- endif -%}
        {%- set name, columns, types = 'lakeplan_pack_' ~ position, [], [] -%}
        {%- set written = member.written | map('lower') | list -%}
        {%- for column in spec.columns if column.name | lower in written and column.name | lower not in key_names -%}
            {%- set lowered = column.name | lower -%}
            {%- set rule = spec.rules[lowered] -%}
            {%- set reason = 'several writers' if writes.count(lowered) > 1 else unpackable if unpackable
                else 'a sequence group' if lowered in spec.grouped
                else 'merge rule ' ~ rule if not spec.merge_rules[rule].packable else '' -%}
            {%- if reason -%}
                {%- do reasons.update({lowered: reason}) -%}
            {%- else -%}
                {%- do columns.append(column) -%}
                {%- do types.append('v' ~ columns | length ~ ':' ~ column.data_type) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- if columns | length > 1 -%}
            {%- for column in columns -%}
                {%- do packed.update({column.name | lower: name ~ '.v' ~ loop.index}) -%}
            {%- endfor -%}
            {%- set type = 'struct<' ~ types | join(',') ~ '>' -%}
            {%- do packs.append({'member': position, 'name': name, 'type': type, 'columns': columns,
                'config': member.config,
                'aggregate': 'first' if modules.re.search('map\\s*<', type | lower) else 'max'}) -%}
        {%- endif -%}
        {%- if columns | length == 1 -%}
            {%- do reasons.update({columns[0].name | lower: 'nothing to pack with'}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set shuffled = one_row | length == write_group.members | length -%}
    {{ return({'packs': packs, 'packed': packed, 'reasons': reasons, 'shuffled': shuffled}) }}
{% endmacro %}

{#- The columns of a member whose value depends on which of its rows wins (a sequence group, or a rule that
    is not order-free): where there is one, the member may send one row per key (and sequence value). -#}
{% macro lakeplan_partial_update_ordered_columns(member, spec) %}
    {%- set ordered = [] -%}
    {%- for column in member.written | map('lower') if column not in spec.unique_key | map('lower') | list
        and (column in spec.grouped or spec.rules[column] not in spec.order_independent) -%}
        {%- do ordered.append(column) -%}
    {%- endfor -%}
    {{ return(ordered) }}
{% endmacro %}

{#- A SQL comment naming a column group's collapse strategy, for a reader of the compiled statement. -#}
{% macro lakeplan_partial_update_strategy_note(strategy, columns) %}
    {%- set listed = ': ' ~ columns | join(', ') if columns else '' -%}
    {{ return('/* collapse ' ~ (strategy ~ listed) | replace('*/', '* /') ~ ' */\n            ') }}
{% endmacro %}

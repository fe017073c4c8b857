{#- SQL of the unioned partial-update write (Apache Paimon's partial-update merge engine):
    UNION ALL of the members, padded with typed NULLs -> collapse to one row per key -> one MERGE.
    Per key and column its merge rule decides (default: the latest non-null value wins, a NULL never
    overwrites; merge_rules.sql); rows already in the table are older than this run's. Rows are ordered by
    (sequence_by, member position): NULL sequence first. Sequences of different type families are never compared
    or cast into each other: each family is its own field of `lakeplan_order.sequence` (only members that write one
    column, or delete, are compared, and the checks before the write give those one family). -#}

{#- One union branch per member: every written target column, cast to its type; the others NULL. A packed
    member's columns travel as one struct (the other branches' struct NULL), not as padded columns. -#}
{% macro lakeplan_partial_update_union_sql(write_group, spec, layout) %}
    {%- set branches = [] -%}
    {%- for member in write_group.members -%}
        {%- set position = loop.index -%}
        {%- set projections = [] -%}
        {%- for column in spec.columns if column.name | lower not in layout.packed -%}
            {%- do projections.append(lakeplan.lakeplan_partial_update_member_value(member, spec, column)
                ~ ' as ' ~ lakeplan.lakeplan_quote(column.name)) -%}
        {%- endfor -%}
        {%- for pack in layout.packs -%}
            {%- set fields = [] -%}
            {%- for column in pack.columns if pack.member == position -%}
                {%- do fields.append("'v" ~ loop.index ~ "', "
                    ~ lakeplan.lakeplan_partial_update_member_value(member, spec, column)) -%}
            {%- endfor -%}
            {%- set value = 'named_struct(' ~ fields | join(', ') ~ ')' if fields
                else 'cast(null as ' ~ pack.type ~ ')' -%}
            {%- do projections.append(value ~ ' as ' ~ pack.name) -%}
        {%- endfor -%}
        {%- set sequences = [] -%}
        {%- for family in write_group.sequence_families -%}
            {%- do sequences.append("'" ~ family ~ "', " ~ (lakeplan.lakeplan_quote(member.config.sequence_by)
                if family == member.sequence_family else 'null')) -%}
        {%- endfor -%}
        {%- set sequence_value = 'named_struct(' ~ sequences | join(', ') ~ ')' if sequences
            else 'cast(null as int)' -%}
        {%- do projections.append(
            "named_struct('sequence', " ~ sequence_value ~ ", 'member', " ~ position ~ ') as lakeplan_order') -%}
        {%- set op_column = member.config.op_column -%}
        {%- do projections.append((lakeplan.lakeplan_quote(op_column) if op_column else 'cast(null as string)')
            ~ ' as lakeplan_op') -%}
        {%- set row_check = lakeplan.lakeplan_row_guard(spec.unique_key, op_column, ' in member `' ~ member.config.name
            ~ '` of `' ~ spec.model ~ '`' ~ (' (op column `' ~ op_column ~ '`)' if op_column else ''), spec.model,
            '`' ~ member.config.name ~ '`') -%}
        {%- do projections.append(row_check ~ ' as lakeplan_row_check') -%}
        {%- do branches.append('select ' ~ projections | join(',\n        ') ~ '\n    from ' ~ member.view) -%}
    {%- endfor -%}
    {{ return(branches | join('\n    union all\n    ')) }}
{% endmacro %}

{#- A member's value for one target column, cast to the column's type without losing a value and checked as its
    merge rule asks; NULL where the member does not write the column. -#}
{% macro lakeplan_partial_update_member_value(member, spec, column) %}
    {%- set matches = [] -%}
    {%- for name in member.written if name | lower == column.name | lower -%}
        {%- do matches.append(name) -%}
    {%- endfor -%}
    {%- set source = matches | first -%}
    {%- if not source -%}{{ return('cast(null as ' ~ column.data_type ~ ')') }}{%- endif -%}
    {%- set sender = lakeplan.lakeplan_partial_update_sends(member, spec) ~ ' in column `' ~ column.name ~ '`' -%}
    {%- set from_type = member.types[source | lower] -%}
    {%- set value = lakeplan.lakeplan_checked_cast(lakeplan.lakeplan_quote(source), from_type, column.data_type,
        sender ~ ' the value', lakeplan.lakeplan_partial_update_fix(member, from_type)) -%}
    {%- if column.name | lower not in spec.rules -%}{{ return(value) }}{%- endif -%}
    {%- set rule = spec.merge_rules[spec.rules[column.name | lower]] -%}
    {{ return(lakeplan.lakeplan_merge_rule_checked_value(rule, value, sender,
        lakeplan.lakeplan_key_json(spec),
        'send ' ~ rule.value_check.wants ~ ' from `' ~ member.config.name ~ '`, or filter the value out there.'
        if rule.value_check else '')) }}
{% endmacro %}

{#- SQL: whether a union row comes from a member of the group that writes `column`. -#}
{% macro lakeplan_partial_update_written_by(write_group, column) %}
    {%- set positions = [] -%}
    {%- for member in write_group.members if column.name | lower in member.written | map('lower') | list -%}
        {%- do positions.append(write_group.members.index(member) + 1) -%}
    {%- endfor -%}
    {{ return('lakeplan_order.member in (' ~ positions | join(', ') ~ ')' if positions else 'false') }}
{% endmacro %}

{#- The start of a checked cast's message for a member's value, and (below) its fix. -#}
{% macro lakeplan_partial_update_sends(member, spec) %}
    {{ return('member `' ~ member.config.name ~ '` of `' ~ spec.model ~ '` sends') }}
{% endmacro %}

{% macro lakeplan_partial_update_fix(member, from_type) %}
    {#- a wider column holds a larger number, not text that is no number -#}
    {%- set widen = ', or, for a number too large, widen' if lakeplan.lakeplan_type_family(from_type or '') == 'string'
        else ', or widen' -%}
    {{ return('convert or filter the value in `' ~ member.config.name ~ '`' ~ widen
        ~ ' the target column\'s data_type.') }}
{% endmacro %}

{#- One row per key: each column's value by its merge rule, each sequence group's accepted row, plus
    `lakeplan_deleted` / `lakeplan_alive` (remove_record: the key was deleted in this run / re-inserted after
    its last delete). Retractions (-U/-D) stay in the rows only where a rule takes them back (`sum`, `count`). `layout`: the
    group's lakeplan_partial_update_layout. -#}
{% macro lakeplan_partial_update_collapse_sql(write_group, spec, layout) %}
    {%- set keys = lakeplan.lakeplan_quote_list(spec.unique_key) -%}
    {%- set key_names = spec.unique_key | map('lower') | list -%}
    {%- set removes = write_group.changelog and spec.on_delete == 'remove_record' -%}
    {%- set retracting = [] -%}
    {%- for column in write_group.written if column in spec.rules and spec.merge_rules[spec.rules[column]].retracts -%}
        {%- do retracting.append(column) -%}
    {%- endfor -%}
    {%- set retracts = write_group.changelog and retracting -%}
    {%- set dropped_ops = [] if retracts else ['-U'] + ([] if removes else ['-D']) -%}
    {%- set after_delete = '(lakeplan_last_delete is null or lakeplan_order > lakeplan_last_delete)'
        if removes else 'true' -%}
    {%- set member_keys = [] -%}
    {%- for key in spec.unique_key -%}
        {%- do member_keys.append('lakeplan_members.' ~ lakeplan.lakeplan_quote(key)) -%}
    {%- endfor -%}
    {%- set last_delete = ", max(case when lakeplan_op = '-D' then lakeplan_order end)"
        ~ ' over (partition by ' ~ member_keys | join(', ') ~ ') as lakeplan_last_delete' if removes else '' -%}
    {#- a row ordered by the tombstones' sequence and older than its key's last delete in an earlier run loses; a row
        unsequenced, or ordered by another sequence, comes after it (partial_update.tombstone_sequence) -#}
    {%- set compared, families = [], [] -%}
    {%- for member in write_group.members -%}
        {%- if (member.config.sequence_by or '') | lower == spec.tombstone_sequence -%}
            {%- do compared.append(loop.index | string) -%}
            {%- do families.append(member.sequence_family) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set tombstoned = spec.tombstones and compared -%}
    {%- set tombstone_join = lakeplan.lakeplan_join_tombstones(spec.tombstones, 'lakeplan_members', spec.unique_key)
        if tombstoned else '' -%}
    {%- set sequence = 'lakeplan_order.sequence.' ~ families | first -%}
    {%- set tombstone_filter = " and (lakeplan_op = '-D' or lakeplan_order.member not in (" ~ compared | join(', ')
        ~ ') or ' ~ sequence ~ ' is null or ' ~ lakeplan.lakeplan_after_tombstone(sequence) ~ ')' if tombstoned else '' -%}
    {%- set sequenced = [] -%}
    {%- for member in write_group.members if member.config.sequence_by -%}
        {%- do sequenced.extend(member.written | map('lower')) -%}
    {%- endfor -%}
    {%- set aggregates, outputs, by_column_reasons = [], [], [] -%}
    {%- for column in spec.columns if column.name | lower not in key_names
        and spec.grouped.get(column.name | lower) not in write_group.written -%}
        {%- set name = lakeplan.lakeplan_quote(column.name) -%}
        {%- if column.name | lower in layout.packed -%}
            {%- do outputs.append(layout.packed[column.name | lower] ~ ' as ' ~ name) -%}
        {%- else -%}
            {%- set rule = spec.merge_rules[spec.rules[column.name | lower]] -%}
            {%- set ordered = removes or column.name | lower in sequenced -%}
            {%- set written_by = lakeplan.lakeplan_partial_update_written_by(write_group, column)
                if rule.null_overwrites or '{written_order}' in rule.collapse else 'false' -%}
            {%- set value = lakeplan.lakeplan_merge_rule_collapse(rule, name, column.data_type, ordered,
                write_group.changelog,
                written_by, spec.delimiters.get(column.name | lower), lakeplan.lakeplan_merge_rule_overflow(spec, column, '')) -%}
            {%- if rule.null_overwrites -%}
                {#- a written NULL overwrites, so the MERGE must know whether this run wrote the column -#}
                {%- set written = lakeplan.lakeplan_quote('lakeplan_written_' ~ column.name) -%}
                {%- set live = ' and lakeplan_live' if write_group.changelog else '' -%}
                {%- do aggregates.append('count_if(' ~ written_by ~ live
                    ~ ') > 0 as ' ~ written) -%}
                {%- do outputs.append(written) -%}
            {%- endif -%}
            {#- a comment where the reason changes, for the columns that follow it -#}
            {%- set reason = layout.reasons.get(column.name | lower, 'no member of the group writes it') -%}
            {%- set note = '' if by_column_reasons and by_column_reasons[-1] == reason else
                lakeplan.lakeplan_partial_update_strategy_note('column by column (' ~ reason ~ ')', []) -%}
            {%- do aggregates.append(note ~ value ~ ' as ' ~ name) -%}
            {%- do by_column_reasons.append(reason) -%}
            {%- do outputs.append(name) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- for pack in layout.packs -%}
        {%- set aggregate = pack.aggregate ~ '(' ~ pack.name ~ (', true)' if pack.aggregate == 'first' else ')') -%}
        {%- do aggregates.append(lakeplan.lakeplan_partial_update_strategy_note('packed: member `' ~ pack.config.name
            ~ '`, one row per key, one ' ~ pack.aggregate ~ '() of a struct', pack.columns | map(attribute='name'))
            ~ aggregate ~ ' as ' ~ pack.name) -%}
    {%- endfor -%}
    {#- a sequence group: the whole row of the greatest version wins, NULLs included -#}
    {%- for group in spec.sequence_groups if group.sequence in write_group.written -%}
        {%- set struct_name = 'lakeplan_group_' ~ loop.index -%}
        {%- set fields = [] -%}
        {%- for name in [group.sequence] + group.columns -%}
            {%- do fields.append("'v" ~ loop.index ~ "', " ~ lakeplan.lakeplan_quote(name)) -%}
            {%- do outputs.append(struct_name ~ '.v' ~ loop.index ~ ' as ' ~ lakeplan.lakeplan_quote(name)) -%}
        {%- endfor -%}
        {%- set version = lakeplan.lakeplan_quote(group.sequence) -%}
        {%- do aggregates.append('max_by(named_struct(' ~ fields | join(', ') ~ '), case when ' ~ version
            ~ " is not null and lakeplan_live then named_struct('version', " ~ version ~ ", 'order', lakeplan_order)"
            ~ ' end) as ' ~ struct_name) -%}
    {%- endfor -%}
    {#- a count, not max(lakeplan_last_delete): an aggregate over a struct takes Spark off hash aggregation
        onto a sort of every row (4x slower at 100k keys x 10 members) -#}
    {%- do aggregates.append(("count_if(lakeplan_op = '-D') > 0" if removes else 'false') ~ ' as lakeplan_deleted') -%}
    {%- set alive = 'count_if(lakeplan_live) > 0' if write_group.changelog else 'true' -%}
    {%- do aggregates.append(alive ~ ' as lakeplan_alive') -%}
    {%- do outputs.extend(['lakeplan_deleted', 'lakeplan_alive']) -%}
    {%- set members = '(\n' ~ lakeplan.lakeplan_partial_update_union_sql(write_group, spec, layout) ~ '\n)' -%}
    {%- if layout.shuffled -%}
        {%- set members = lakeplan.lakeplan_repartition(members, write_group.group.parallelism, spec.unique_key) -%}
    {%- endif -%}
    select
        {{ keys }},
        {{ outputs | join(',\n        ') }}
    from (
        select
            {{ keys }},
            {{ aggregates | join(',\n            ') }}
        from (
            select *,
                (lakeplan_op is null or lakeplan_op in ('+I', '+U')) and {{ after_delete }} as lakeplan_live,
                lakeplan_op in ('-U', '-D') and {{ after_delete }} as lakeplan_retract
            from (
                select lakeplan_members.*{{ last_delete }}
                from {{ members }} as lakeplan_members {{ tombstone_join }}
                where lakeplan_row_check {{ lakeplan.lakeplan_partial_update_dropped_ops(dropped_ops) }}{{ tombstone_filter }}
            ) as lakeplan_ordered
        ) as lakeplan_rows
        group by {{ keys }}
        having {{ lakeplan.lakeplan_partial_update_duplicate_check(write_group, spec, layout) }}
    ) as lakeplan_collapsed
{% endmacro %}

{#- Changelog rows that no column of the group needs: -U (the +U carries the new values), and -D unless it
    removes records. A retracting rule (`sum`, `count`) takes both back, so they stay when the group writes one. -#}
{% macro lakeplan_partial_update_dropped_ops(ops) %}
    {%- if ops -%}
        {{ return("and (lakeplan_op is null or lakeplan_op not in ('" ~ ops | join("', '") ~ "'))") }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}

{#- Two rows of one member with one key and one sequence value leave no order: an error, not a guess, naming
    the member (the sequenced members share one check, so it names those).
    A member without sequence may have one row per key, which plain counts check; only sequenced members need
    the set of (sequence, member) pairs, an aggregate Spark runs off its fast hash-aggregate path. A member
    whose columns all have order-free rules (sum, max, ...) may send any number of rows per key. -#}
{% macro lakeplan_partial_update_duplicate_check(write_group, spec, layout) %}
    {%- set checks, sequenced, sequenced_names = [], [], [] -%}
    {%- set live = 'lakeplan_live and ' if write_group.changelog else '' -%}
    {%- set packs = {} -%}
    {%- for pack in layout.packs -%}{%- do packs.update({pack.member: pack.name}) -%}{%- endfor -%}
    {%- set key = 'to_json(struct(' ~ lakeplan.lakeplan_quote_list(spec.unique_key) ~ '))' -%}
    {%- for member in write_group.members -%}
        {%- set ordered = lakeplan.lakeplan_partial_update_ordered_columns(member, spec) -%}
        {%- set name = '`' ~ member.config.name ~ '`' -%}
        {%- set unordered = ['Member ' ~ name ~ ' of `' ~ spec.model ~ '` sends more than one row for the key ',
            ', and without `sequence_by` lakeplan cannot tell which one is last. `' ~ spec.model ~ '` is unchanged.'
            ~ ' Fix: send one row per key from ' ~ name ~ ', or set its `sequence_by` to a column that orders them.'] -%}
        {%- if ordered and member.config.sequence_by -%}
            {%- do sequenced.append(loop.index | string) -%}
            {%- do sequenced_names.append(name) -%}
        {%- elif loop.index in packs -%}
            {#- a packed member's rows are the rows where its struct is not NULL (all live: it has no op column) -#}
            {%- do checks.append(['count(' ~ packs[loop.index] ~ ') > 1'] + unordered) -%}
        {%- elif ordered -%}
            {%- set rows = 'count_if(' ~ live ~ 'lakeplan_order.member = ' ~ loop.index ~ ')' -%}
            {%- do checks.append([rows ~ ' > 1'] + unordered) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if sequenced -%}
        {%- set mine = live ~ 'lakeplan_order.member in (' ~ sequenced | join(', ') ~ ')' -%}
        {%- set which = 'member ' ~ sequenced_names[0] ~ ' of `' ~ spec.model ~ '`' if sequenced_names | length == 1
            else 'one member of `' ~ spec.model ~ '` (' ~ sequenced_names | join(' or ') ~ ')' -%}
        {%- do checks.append([
            'size(collect_set(case when ' ~ mine ~ ' then lakeplan_order end)) < count_if(' ~ mine ~ ')',
            'Two rows of ' ~ which ~ ' have the key ',
            ' and one `sequence_by` value, so lakeplan cannot tell which one is last. `' ~ spec.model
                ~ '` is unchanged. Fix: make each member\'s sequence values unique per key.']) -%}
    {%- endif -%}
    {%- if not checks -%}{{ return('true') }}{%- endif -%}
    {%- set cases = [] -%}
    {%- for condition, before, after in checks -%}
        {%- do cases.append('when ' ~ condition ~ ' then raise_error(concat(' ~ lakeplan.lakeplan_string_literal(before)
            ~ ', ' ~ key ~ ', ' ~ lakeplan.lakeplan_string_literal(after) ~ '))') -%}
    {%- endfor -%}
    {{ return('case ' ~ cases | join(' ') ~ ' else true end') }}
{% endmacro %}

{#- One group's collapsed rows as a subquery, distributed for the write. -#}
{% macro lakeplan_partial_update_source(write_group, spec, layout) %}
    {%- set collapsed = lakeplan.lakeplan_partial_update_collapse_sql(write_group, spec, layout) -%}
    {#- a shuffled collapse is distributed on the key into `parallelism` partitions already -#}
    {%- set parallelism = none if layout.shuffled else write_group.group.parallelism -%}
    {{ return('(\n' ~ lakeplan.lakeplan_sink_distribution_by(collapsed, parallelism, spec.unique_key) ~ '\n)') }}
{% endmacro %}

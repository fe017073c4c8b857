{#- The target's plan as its macros read it: {owner, model, unique_key, columns: [{name, data_type}], on_delete,
    groups, rules: {column: merge rule}, order_independent, merge_rules: {rule: its declaration}, delimiters,
    sequence_groups: [{sequence, columns}], grouped: {column: its sequence}}. -#}
{% macro lakeplan_validate_get_partial_update_spec(node=none) %}
    {%- set plan, name = lakeplan.lakeplan_plan(node), (node or model).name -%}
    {%- set spec = {'owner': 'partial-update target `' ~ name ~ '`', 'model': name, 'unique_key': plan.key} -%}
    {%- do spec.update(plan.partial_update) -%}
    {{ return(spec) }}
{% endmacro %}

{#- Checks one member's real columns against the target: key, op and sequence columns present, every written
    column a target column of a type that casts. -#}
{% macro lakeplan_validate_partial_update_member(member, columns, spec) %}
    {%- set target_types = {} -%}
    {%- for column in spec.columns -%}
        {%- do target_types.update({column.name | lower: column.data_type}) -%}
    {%- endfor -%}
    {%- set member_columns = columns | map(attribute='name') | map('lower') | list -%}
    {%- set fix = ' Fix: ' -%}
    {%- for key in spec.unique_key if key | lower not in member_columns -%}
        {%- do exceptions.raise_compiler_error(
            'Member `' ~ member.name ~ '` of ' ~ spec.owner ~ ' does not select the key column `' ~ key ~ '`.'
            ~ '\nEvery member row must name the row it updates.' ~ fix ~ 'select `' ~ key ~ '` in `' ~ member.name ~ '`.') -%}
    {%- endfor -%}
    {%- for needed in [member.op_column, member.sequence_by] if needed and needed | lower not in member_columns -%}
        {%- do exceptions.raise_compiler_error(
            'Member `' ~ member.name ~ '` of ' ~ spec.owner ~ ' names `' ~ needed ~ '` (op_column / sequence_by), '
            ~ 'which it does not select.' ~ fix ~ 'select that column, or correct the member\'s config.') -%}
    {%- endfor -%}
    {%- for column in columns if column.name | lower not in lakeplan.lakeplan_member_control_columns(member) -%}
        {%- set target_type = target_types.get(column.name | lower) -%}
        {%- if target_type is none -%}
            {%- do exceptions.raise_compiler_error(
                'Member `' ~ member.name ~ '` selects `' ~ column.name ~ '`, which is not a column of ' ~ spec.owner
                ~ '. Its columns: ' ~ target_types.keys() | join(', ') ~ '.'
                ~ fix ~ 'rename it to a target column, drop it, or declare it in `' ~ spec.model ~ '`\'s YAML.') -%}
        {%- elif not lakeplan.lakeplan_can_cast(column.dtype, target_type) -%}
            {%- do exceptions.raise_compiler_error(
                'Member `' ~ member.name ~ '` writes `' ~ column.name ~ '` as ' ~ column.dtype ~ ', which Spark cannot '
                ~ 'cast to the target\'s ' ~ target_type ~ ' (' ~ spec.owner ~ ').'
                ~ fix ~ 'convert it in `' ~ member.name ~ '`, or change the column\'s data_type.') -%}
        {%- endif -%}
    {%- endfor -%}
{% endmacro %}

{#- A column that several members write needs a rule that does not depend on order (sum, max, ...), a
    sequence group, or `sequence_by` on both members; otherwise which value wins would depend on the run.
    A member that writes a sequence group's column must write its version, or its values could never land.
    Every pair of members that shares such columns is named, with all their columns, in one error. -#}
{% macro lakeplan_validate_partial_update_overlaps(write_groups, spec) %}
    {%- set writers, shared = {}, {} -%}
    {%- set keys = spec.unique_key | map('lower') | list -%}
    {%- for write_group in write_groups -%}
        {%- set group = loop.index -%}
        {%- for member in write_group.members -%}
            {%- set written = member.written | map('lower') | list -%}
            {%- for column in written if column not in keys -%}
                {%- set sequence = spec.grouped.get(column) -%}
                {%- if sequence and sequence not in written -%}
                    {%- do exceptions.raise_compiler_error(
                        'Member `' ~ member.config.name ~ '` writes `' ~ column ~ '` of ' ~ spec.owner ~ ', which is in '
                        ~ 'sequence group ' ~ sequence ~ ', but does not select `' ~ sequence ~ '`: its values would '
                        ~ 'never be accepted. Fix: select the group\'s version as `' ~ sequence ~ '` in `'
                        ~ member.config.name ~ '`.') -%}
                {%- endif -%}
                {%- set earlier = writers.get(column) -%}
                {%- if earlier and not sequence and spec.rules[column] not in spec.order_independent -%}
                    {%- set pair = earlier.config.name ~ ' ' ~ member.config.name -%}
                    {%- if pair not in shared -%}
                        {%- do shared.update({pair: {'earlier': earlier, 'member': member, 'columns': [],
                            'separate_writes': earlier.group != group}}) -%}
                    {%- endif -%}
                    {%- do shared[pair].columns.append(column) -%}
                {%- endif -%}
                {%- do writers.update({column: {'config': member.config, 'types': member.types, 'group': group}}) -%}
            {%- endfor -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- set problems = [] -%}
    {%- for pair in shared.values() -%}
        {%- set problem = lakeplan.lakeplan_shared_columns_problem(pair, spec) -%}
        {%- if problem -%}{%- do problems.append(problem) -%}{%- endif -%}
    {%- endfor -%}
    {%- if problems -%}{%- do exceptions.raise_compiler_error(problems | join('\n\n')) -%}{%- endif -%}
{% endmacro %}

{#- Why two members may not both write `shared.columns` (whose rules depend on order), or '' when they may: both
    sequenced by versions of one type family in one write (a later write's MERGE sees the stored value, not the
    version it came with). -#}
{% macro lakeplan_shared_columns_problem(shared, spec) %}
    {%- set earlier, member, columns = shared.earlier, shared.member, shared.columns -%}
    {%- set listed = '`' ~ columns | join('`, `') ~ '`' -%}
    {%- set rules = [] -%}
    {%- for column in columns if spec.rules[column] not in rules -%}
        {%- do rules.append(spec.rules[column]) -%}
    {%- endfor -%}
    {%- set names = 'Members `' ~ earlier.config.name ~ '` and `' ~ member.config.name ~ '` both write '
        ~ ('column ' if columns | length == 1 else 'columns ') ~ listed ~ ' of ' ~ spec.owner -%}
    {%- if not (earlier.config.sequence_by and member.config.sequence_by) -%}
        {{ return(names ~ ', whose merge rule' ~ ('s ' if rules | length > 1 else ' ') ~ rules | join(', ')
            ~ (' depend' if rules | length > 1 else ' depends') ~ ' on order, and not both set '
            ~ '`sequence_by`: which value wins is ambiguous. Fix: set `sequence_by` on both members (the '
            ~ 'later row wins), let one member write ' ~ ('it' if columns | length == 1 else 'each') ~ ', or give '
            ~ ('it' if columns | length == 1 else 'them') ~ ' an order-free rule ('
            ~ spec.order_independent | join(', ') ~ ').') }}
    {%- endif -%}
    {%- if shared.separate_writes -%}
        {{ return(names ~ ', ordered by `sequence_by`, but in separate writes (their write settings differ): the '
            ~ 'later write would win whatever the versions say. Fix: give both members the same write settings '
            ~ '(write_mode, static_partition, write_options, parallelism, and both insert-only or both changelogs) so '
            ~ 'they share one write, or put ' ~ listed ~ ' and ' ~ ('its' if columns | length == 1 else 'their')
            ~ ' version in a sequence group (`sequence_groups`), whose stored version decides across writes.') }}
    {%- endif -%}
    {%- set types = [] -%}
    {%- for one in [earlier, member] -%}
        {%- do types.append(one.types[one.config.sequence_by | lower]) -%}
    {%- endfor -%}
    {%- set families = [lakeplan.lakeplan_type_family(types[0]), lakeplan.lakeplan_type_family(types[1])] -%}
    {%- if families[0] != families[1] -%}
        {{ return(names ~ ', ordered by `sequence_by` columns of different types (`' ~ earlier.config.sequence_by
            ~ '` ' ~ types[0] ~ ', `' ~ member.config.sequence_by ~ '` ' ~ types[1] ~ '): one cannot be compared '
            ~ 'with the other without a cast that decides the winner. Fix: give both members versions of one type '
            ~ 'that mean the same, e.g. select the source\'s change time (or its log position) in each; a cast of one '
            ~ 'into the other\'s type would only hide that they do not compare.') }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}

{#- The members ordered by the sequence the tombstones hold (partial_update.tombstone_sequence) are compared with
    its deletes, in this run and later ones: their `sequence_by` columns must be of one type family. -#}
{% macro lakeplan_validate_tombstone_sequence(write_groups, spec) %}
    {%- set ordered = [] -%}
    {%- for write_group in write_groups -%}
        {%- for member in write_group.members
            if (member.config.sequence_by or '') | lower == spec.tombstone_sequence -%}
            {%- do ordered.append(member) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- if ordered | map(attribute='sequence_family') | unique | list | length > 1 -%}
        {%- set listed = [] -%}
        {%- for member in ordered -%}
            {%- do listed.append('`' ~ member.config.name ~ '` (' ~ member.types[spec.tombstone_sequence] ~ ')') -%}
        {%- endfor -%}
        {%- do exceptions.raise_compiler_error(
            'Members ' ~ listed | join(', ') ~ ' of ' ~ spec.owner ~ ' are ordered by one sequence `'
            ~ spec.tombstone_sequence ~ '`, whose deletes remove the record (partial_update_on_delete: '
            ~ 'remove_record), but of different types: a delete cannot be compared with their rows without a cast '
            ~ 'that decides the winner. Fix: give `' ~ spec.tombstone_sequence ~ '` one type in all of them by '
            ~ 'selecting as it the same version (e.g. the source\'s log position) in each member, not a cast (text '
            ~ 'cast to a number is NULL where it is none), or rename it where it is another sequence.') -%}
    {%- endif -%}
{% endmacro %}

{#- Whether Spark (non-ANSI) casts `from_type` to `to_type`, by type family (spark_types.CASTS). -#}
{% macro lakeplan_can_cast(from_type, to_type) %}
    {%- if from_type | lower | replace(' ', '') == to_type | lower | replace(' ', '') -%}{{ return(true) }}{%- endif -%}
    {%- set source = lakeplan.lakeplan_type_family(from_type) -%}
    {{ return(lakeplan.lakeplan_type_family(to_type) in lakeplan.lakeplan_types().casts.get(source, ['string'])) }}
{% endmacro %}

{#- A member's op and sequence columns (lower case): they order and classify rows, they are not written. -#}
{% macro lakeplan_member_control_columns(member) %}
    {{ return([member.op_column, member.sequence_by] | select | map('lower') | list) }}
{% endmacro %}

{#- A target's columns whose merge rule changes the value when the same rows are applied again (`counts_again`: `sum`,
    `count`, `product`, `append`, `listagg`), as `column (rule)`; `partial_update`: the target's plan's section;
    `written`: only those among these column names (lower case). -#}
{% macro lakeplan_counted_columns(partial_update, written=none) %}
    {%- set counted = [] -%}
    {%- for column, rule in (partial_update.get('rules') or {}) | dictsort
        if partial_update.merge_rules[rule].counts_again and (written is none or column | lower in written) -%}
        {%- do counted.append('`' ~ column ~ '` (' ~ rule ~ ')') -%}
    {%- endfor -%}
    {{ return(counted) }}
{% endmacro %}

{#- Whether the target's table holds rows and records the member `unique_id` among its parts (or records no parts:
    a table recorded before them): rows the member sent before may be in it. -#}
{% macro lakeplan_holds_member_rows(unique_id) %}
    {%- set parts = lakeplan.lakeplan_stored_fingerprint(this).parts -%}
    {%- if parts is not none and ('member:' ~ unique_id) not in parts -%}{{ return(false) }}{%- endif -%}
    {{ return(run_query('select 1 from ' ~ this ~ ' limit 1').rows | length > 0) }}
{% endmacro %}

{#- A member that reads new_rows of an input whole (its rows changed, or the snapshot the last write consumed
    expired or left its history, or the table records none of it while the member's rows are in it) would send rows
    the target already holds: where the member writes a column whose rule counts them again, the write stops with
    the fix before anything is written. Otherwise the write goes on, and each whole reading is logged. -#}
{% macro lakeplan_check_whole_reads(write_groups, spec) %}
    {%- set members = write_groups | map(attribute='members') | sum(start=[]) -%}
    {%- for member in members -%}
        {%- set counted = lakeplan.lakeplan_counted_columns(spec, member.written | map('lower') | list) -%}
        {%- for reader, relation, kind, cause in lakeplan.lakeplan_new_rows_read_whole(member.ctes | join('\n'))
            if counted and reader == 'new_rows'
            and (kind != 'unrecorded' or lakeplan.lakeplan_holds_member_rows(member.config.unique_id)) -%}
            {%- set keep = {
                'expired': ', and keep the snapshots of ' ~ relation ~ ' (its expire_snapshots retention) longer '
                    ~ 'than the time between two runs of `' ~ spec.model ~ '`.',
                'replaced': ' after each rebuild or rollback of ' ~ relation ~ '.',
                'changed': ', or append to ' ~ relation ~ ' instead of changing its rows.',
                'unrecorded': '; or, if `' ~ member.config.name ~ '` never read ' ~ relation ~ ' before (a new input '
                    ~ 'of it), read it in a new member of its own, whose columns hold nothing of it yet.'}[kind] -%}
            {%- do exceptions.raise_compiler_error('`' ~ member.config.name ~ '` reads new_rows(' ~ relation ~ '), '
                ~ ('whose ' ~ cause if kind == 'changed' else 'but ' ~ cause ~ ' while it holds what `'
                ~ member.config.name ~ '` sent before' if kind == 'unrecorded'
                else 'but ' ~ cause ~ ', so what is new since cannot be told')
                ~ ': `' ~ spec.model ~ '` adds up what `' ~ member.config.name
                ~ '` sends (' ~ counted | join(', ') ~ '), and reading the input whole would count its rows again. `'
                ~ spec.model ~ '` is unchanged. Fix: rebuild it with `dbt run -s ' ~ spec.model ~ ' --full-refresh`'
                ~ keep) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- for member in members -%}
        {%- do lakeplan.lakeplan_log_whole_reads(member.config.name, member.ctes | join('\n')) -%}
    {%- endfor -%}
{% endmacro %}

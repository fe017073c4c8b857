{#- The target's validated settings: {model, unique_key, columns: [{name, data_type}], on_delete, groups,
    rules: {column: merge rule}, sequence_groups: [{sequence, columns}], grouped: {column: its sequence}}. -#}
{% macro lakeplan_validate_get_partial_update_spec() %}
    {%- set owner = 'partial-update target `' ~ model.name ~ '`' -%}
    {%- set on_delete = config.get('partial_update_on_delete', 'error') -%}
    {%- set on_delete_modes = ['error', 'ignore', 'remove_record'] -%}
    {%- if on_delete not in on_delete_modes -%}
        {%- do exceptions.raise_compiler_error(
            'Unknown partial_update_on_delete ' ~ on_delete | tojson ~ ' for ' ~ owner ~ '.\n'
            ~ 'Allowed: ' ~ on_delete_modes | join(', ') ~ '.\n'
            ~ 'Fix: set `partial_update_on_delete` to one of them (default error).') -%}
    {%- endif -%}
    {%- if config.get('file_format') != 'iceberg' -%}
        {%- do exceptions.raise_compiler_error(
            owner ~ ' has file_format ' ~ config.get('file_format') | tojson ~ '; its writes are MERGEs, which need '
            ~ 'row-level updates.\nFix: set `file_format: iceberg`.') -%}
    {%- endif -%}
    {%- set columns = [] -%}
    {%- for column in model.columns.values() -%}
        {%- do columns.append({'name': column.name, 'data_type': column.data_type | lower}) -%}
    {%- endfor -%}
    {%- set merge = config.get('lakeplan_merge_rules') or {} -%}
    {%- set grouped = {} -%}
    {%- for group in merge.get('sequence_groups', []) -%}
        {%- for name in [group.sequence] + group.columns -%}
            {%- do grouped.update({name: group.sequence}) -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return({
        'owner': owner,
        'model': model.name,
        'unique_key': lakeplan.lakeplan_name_list(config.get('unique_key'), owner, 'unique_key'),
        'columns': columns,
        'on_delete': on_delete,
        'groups': lakeplan.lakeplan_partial_update_groups(),
        'rules': merge.get('rules', {}),
        'order_independent': merge.get('order_independent', []),
        'sequence_groups': merge.get('sequence_groups', []),
        'grouped': grouped,
    }) }}
{% endmacro %}

{#- Checks one member's real columns against the target: key present, every written column a target
    column of a type that casts, changelog members allowed by `partial_update_on_delete`. -#}
{% macro lakeplan_validate_partial_update_member(member, columns, spec) %}
    {%- set target_types = {} -%}
    {%- for column in spec.columns -%}
        {%- do target_types.update({column.name | lower: column.data_type}) -%}
    {%- endfor -%}
    {%- set member_columns = columns | map(attribute='name') | map('lower') | list -%}
    {%- set fix = '\nFix: ' -%}
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
    {%- if member.op_column and spec.on_delete == 'error' -%}
        {%- do exceptions.raise_compiler_error(
            'Member `' ~ member.name ~ '` of ' ~ spec.owner ~ ' is a changelog (op_column `' ~ member.op_column ~ '`) '
            ~ 'whose deletes the target refuses (partial_update_on_delete: error, as Paimon\'s partial-update).'
            ~ fix ~ 'set `partial_update_on_delete: ignore` (drop -D/-U rows) or `remove_record` (a -D removes '
            ~ 'the row) on `' ~ spec.model ~ '`.') -%}
    {%- endif -%}
    {%- for column in columns if column.name | lower not in lakeplan.lakeplan_member_control_columns(member) -%}
        {%- set target_type = target_types.get(column.name | lower) -%}
        {%- if target_type is none -%}
            {%- do exceptions.raise_compiler_error(
                'Member `' ~ member.name ~ '` selects `' ~ column.name ~ '`, which is not a column of ' ~ spec.owner
                ~ '.\nIts columns: ' ~ target_types.keys() | join(', ') ~ '.'
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
    A member that writes a sequence group's column must write its version, or its values could never land. -#}
{% macro lakeplan_validate_partial_update_overlaps(plans, spec) %}
    {%- set writers = {} -%}
    {%- set keys = spec.unique_key | map('lower') | list -%}
    {%- for plan in plans -%}
        {%- for member in plan.members -%}
            {%- set written = member.written | map('lower') | list -%}
            {%- for column in written if column not in keys -%}
                {%- set sequence = spec.grouped.get(column) -%}
                {%- if sequence and sequence not in written -%}
                    {%- do exceptions.raise_compiler_error(
                        'Member `' ~ member.config.name ~ '` writes `' ~ column ~ '` of ' ~ spec.owner ~ ', which is in '
                        ~ 'sequence group ' ~ sequence ~ ', but does not select `' ~ sequence ~ '`: its values would '
                        ~ 'never be accepted.\nFix: select the group\'s version as `' ~ sequence ~ '` in `'
                        ~ member.config.name ~ '`.') -%}
                {%- endif -%}
                {%- set rule = spec.rules.get(column, 'last_non_null') -%}
                {%- set earlier = writers.get(column) -%}
                {%- if earlier and not sequence and rule not in spec.order_independent
                    and not (earlier.sequence_by and member.config.sequence_by) -%}
                    {%- do exceptions.raise_compiler_error(
                        'Members `' ~ earlier.name ~ '` and `' ~ member.config.name ~ '` both write column `' ~ column
                        ~ '` of ' ~ spec.owner ~ ', whose merge rule ' ~ rule ~ ' depends on order, and not both set '
                        ~ '`sequence_by`: which value wins is ambiguous.\nFix: set `sequence_by` on both members (the '
                        ~ 'later row wins), let one member write it, or give it an order-free rule ('
                        ~ spec.order_independent | join(', ') ~ ').') -%}
                {%- endif -%}
                {%- do writers.update({column: member.config}) -%}
            {%- endfor -%}
        {%- endfor -%}
    {%- endfor -%}
{% endmacro %}

{#- Whether Spark (non-ANSI) casts `from_type` to `to_type`, by type family. -#}
{% macro lakeplan_can_cast(from_type, to_type) %}
    {%- set source = lakeplan.lakeplan_type_family(from_type) -%}
    {%- set target = lakeplan.lakeplan_type_family(to_type) -%}
    {%- set casts = {
        'numeric': ['numeric', 'boolean', 'timestamp', 'string'],
        'string': ['string', 'numeric', 'boolean', 'date', 'timestamp', 'binary'],
        'boolean': ['boolean', 'numeric', 'string'],
        'date': ['date', 'timestamp', 'string'],
        'timestamp': ['timestamp', 'date', 'numeric', 'string'],
        'binary': ['binary', 'string'],
        'void': ['numeric', 'string', 'boolean', 'date', 'timestamp', 'binary', 'complex'],
    } -%}
    {%- if from_type | lower | replace(' ', '') == to_type | lower | replace(' ', '') -%}{{ return(true) }}{%- endif -%}
    {{ return(target in casts.get(source, ['string'])) }}
{% endmacro %}

{% macro lakeplan_type_family(data_type) %}
    {%- set name = data_type | lower | trim -%}
    {%- set numeric = ['tinyint', 'byte', 'smallint', 'short', 'int', 'integer', 'bigint', 'long', 'float', 'real',
                       'double', 'decimal', 'dec', 'numeric'] -%}
    {%- set base = name.split('(')[0].split('<')[0] | trim -%}
    {%- if base in numeric -%}{{ return('numeric') }}
    {%- elif base in ['string', 'varchar', 'char'] -%}{{ return('string') }}
    {%- elif base in ['timestamp', 'timestamp_ntz', 'timestamp_ltz'] -%}{{ return('timestamp') }}
    {%- elif base in ['boolean', 'date', 'binary', 'void'] -%}{{ return(base) }}
    {%- else -%}{{ return('complex') }}
    {%- endif -%}
{% endmacro %}

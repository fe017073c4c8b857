{#- Per-column merge rules (Paimon's aggregate functions), compiled into the two places a value is decided:
    the collapse (this run's rows of one key -> one value) and the MERGE (that value against the stored one).
    Rules and sequence groups are checked by lakeplan's plugin (plugins/dbt_lakeplan/merge_rules.py).

    In the collapse, `lakeplan_live` marks the rows that count (+I/+U, after the key's last delete) and
    `lakeplan_retract` the -U/-D rows whose value a `sum` takes back; NULLs never count. -#}

{#- This run's value of one column, by its rule. `ordered` says whether rows compete for it (a sequenced or
    deleting writer); else the column has at most one value per key, which `max` takes with a one-slot
    aggregation buffer (`first(x, true)` keeps two: 15-25% slower at 120 columns), or `first` where the
    type has no order (maps). `changelog` says whether rows can be retractions or precede a delete; without,
    every row counts, and the aggregates read the column as it is (a CASE per row and column costs ~30% at
    100 columns). -#}
{% macro lakeplan_merge_rule_collapse(rule, name, data_type, ordered, changelog, overflow) %}
    {%- set live = ' and lakeplan_live' if changelog else '' -%}
    {%- set live_value = 'case when lakeplan_live then ' ~ name ~ ' end' if changelog else name -%}
    {%- set order = 'case when ' ~ name ~ ' is not null' ~ live ~ ' then lakeplan_order end' -%}
    {%- set in_order = 'transform(array_sort(collect_list(case when ' ~ name ~ ' is not null' ~ live
        ~ " then named_struct('o', lakeplan_order, 'v', " ~ name ~ ') end), '
        ~ '(l, r) -> case when l.o < r.o then -1 when l.o > r.o then 1 else 0 end), e -> e.v)' -%}
    {%- set any_value = 'count(' ~ live_value ~ ') > 0' -%}
    {%- if rule in ['last_non_null', 'first_non_null'] and not ordered -%}
        {%- set orderable = not modules.re.search('map\\s*<', data_type | lower) -%}
        {{ return('max(' ~ live_value ~ ')' if orderable else 'first(' ~ live_value ~ ', true)') }}
    {%- elif rule == 'last_non_null' -%}{{ return('max_by(' ~ name ~ ', ' ~ order ~ ')') }}
    {%- elif rule == 'first_non_null' -%}{{ return('min_by(' ~ name ~ ', ' ~ order ~ ')') }}
    {%- elif rule == 'sum' -%}
        {%- set signed = 'case when lakeplan_live then ' ~ name ~ ' when lakeplan_retract then -' ~ name ~ ' end'
            if changelog else name -%}
        {%- set sum_type = lakeplan.lakeplan_sum_type(data_type) -%}
        {%- set total = 'coalesce(try_sum(' ~ signed ~ '), case when count(' ~ signed ~ ') > 0 then '
            ~ lakeplan.lakeplan_raise_value_error(overflow.message ~ ': the sum of this run\'s values for key', overflow.key,
                sum_type, overflow.fix) ~ ' end)' -%}
        {{ return(lakeplan.lakeplan_checked_cast(total, sum_type, data_type,
            overflow.message ~ ': this run\'s sum', overflow.fix)) }}
    {%- elif rule in ['min', 'max', 'bool_or', 'bool_and'] -%}{{ return(rule ~ '(' ~ live_value ~ ')') }}
    {%- elif rule == 'append' -%}{{ return('case when ' ~ any_value ~ ' then flatten(' ~ in_order ~ ') end') }}
    {%- elif rule == 'append_distinct' -%}
        {{ return('case when ' ~ any_value ~ ' then array_distinct(flatten(' ~ in_order ~ ')) end') }}
    {%- endif -%}
    {%- do exceptions.raise_compiler_error('lakeplan has no collapse for merge rule ' ~ rule | tojson) -%}
{% endmacro %}

{#- The MERGE's new value of a column from the stored value and this run's; a NULL on either side leaves
    the other (least/greatest skip NULLs themselves). A sum that leaves the column's type stops the write. -#}
{% macro lakeplan_merge_rule_combine(rule, stored, change, data_type, overflow) %}
    {%- if rule == 'sum' -%}
        {%- set addition = 'concat(cast(' ~ stored ~ ' as string), \' + \', cast(' ~ change ~ ' as string), '
            ~ '\' for key \', ' ~ overflow.key ~ ')' -%}
        {{ return('case when ' ~ change ~ ' is null then ' ~ stored ~ ' when ' ~ stored ~ ' is null then ' ~ change
            ~ ' else coalesce(try_cast(try_add(' ~ stored ~ ', ' ~ change ~ ') as ' ~ data_type ~ '), '
            ~ lakeplan.lakeplan_raise_value_error(overflow.message ~ ' would become', addition, data_type, overflow.fix) ~ ') end') }}
    {%- endif -%}
    {%- set both = {
        'bool_or': stored ~ ' or ' ~ change,
        'bool_and': stored ~ ' and ' ~ change,
        'append': 'concat(' ~ stored ~ ', ' ~ change ~ ')',
        'append_distinct': 'array_distinct(concat(' ~ stored ~ ', ' ~ change ~ '))',
    } -%}
    {%- if rule == 'last_non_null' -%}{{ return('coalesce(' ~ change ~ ', ' ~ stored ~ ')') }}
    {%- elif rule == 'first_non_null' -%}{{ return('coalesce(' ~ stored ~ ', ' ~ change ~ ')') }}
    {%- elif rule == 'min' -%}{{ return('least(' ~ stored ~ ', ' ~ change ~ ')') }}
    {%- elif rule == 'max' -%}{{ return('greatest(' ~ stored ~ ', ' ~ change ~ ')') }}
    {%- elif rule in both -%}
        {{ return('cast(case when ' ~ change ~ ' is null then ' ~ stored ~ ' when ' ~ stored ~ ' is null then '
            ~ change ~ ' else ' ~ both[rule] ~ ' end as ' ~ data_type ~ ')') }}
    {%- endif -%}
    {%- do exceptions.raise_compiler_error('lakeplan has no MERGE combination for merge rule ' ~ rule | tojson) -%}
{% endmacro %}

{#- Whether a stored row takes this run's values for a sequence group: a non-NULL version at least the
    stored one (Paimon's sequence-group). -#}
{% macro lakeplan_sequence_group_accepts(sequence) %}
    {%- set change = 'lakeplan_change.' ~ lakeplan.lakeplan_quote(sequence) -%}
    {%- set stored = 'lakeplan_table.' ~ lakeplan.lakeplan_quote(sequence) -%}
    {{ return(change ~ ' is not null and (' ~ stored ~ ' is null or ' ~ change ~ ' >= ' ~ stored ~ ')') }}
{% endmacro %}

{#- What an arithmetic rule's overflow error names: the column, the target, the key (SQL over `prefix`-ed key
    columns) and the fix. -#}
{% macro lakeplan_merge_rule_overflow(spec, column, prefix) %}
    {%- set keys = [] -%}
    {%- for key in spec.unique_key -%}{%- do keys.append(prefix ~ lakeplan.lakeplan_quote(key)) -%}{%- endfor -%}
    {{ return({
        'message': '`' ~ spec.model ~ '`.`' ~ column.name ~ '` (merge rule ' ~ spec.rules.get(column.name | lower) ~ ')',
        'key': 'to_json(struct(' ~ keys | join(', ') ~ '))',
        'fix': 'widen `' ~ column.name ~ '`\'s data_type in `' ~ spec.model ~ '`\'s YAML.',
    }) }}
{% endmacro %}

{#- The type Spark's sum() returns for a column of `data_type`. -#}
{% macro lakeplan_sum_type(data_type) %}
    {%- set type = lakeplan.lakeplan_normal_type(data_type) -%}
    {%- set decimal = modules.re.match('^decimal\\((\\d+),(\\d+)\\)$', type) -%}
    {%- if decimal -%}
        {{ return('decimal(' ~ [38, (decimal.group(1) | int) + 10] | min ~ ',' ~ decimal.group(2) ~ ')') }}
    {%- elif type in ['float', 'double'] -%}{{ return('double') }}
    {%- endif -%}
    {{ return('bigint') }}
{% endmacro %}

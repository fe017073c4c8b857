{#- Per-column merge rules (Paimon's aggregate functions), compiled into the two places a value is decided:
    the collapse (this run's rows of one key -> one value) and the MERGE (that value against the stored one).
    Each rule is one declaration in lakeplan's plugin (plugins/dbt_lakeplan/merge_rules.py), checked there at
    parse time; the plan hands a target's declarations over (`spec.merge_rules`) and these macros fill in their
    SQL templates. Nothing here names a rule.

    In the collapse, `lakeplan_live` marks the rows that count (+I/+U, after the key's last delete) and
    `lakeplan_retract` the -U/-D rows whose value a retracting rule takes back; NULLs never count. -#}

{#- This run's value of one column, by its rule. `ordered` says whether rows compete for it (a sequenced or
    deleting writer); else the column has at most one value per key, which `max` takes with a one-slot
    aggregation buffer (`first(x, true)` keeps two: 15-25% slower at 120 columns), or `first` where the
    type has no order (maps). `changelog` says whether rows can be retractions or precede a delete; without,
    every row counts, and the aggregates read the column as it is (a CASE per row and column costs ~30% at
    100 columns). `written_by`: SQL, whether a row's member writes the column. -#}
{% macro lakeplan_merge_rule_collapse(rule, name, data_type, ordered, changelog, written_by, delimiter, overflow) %}
    {%- set live = ' and lakeplan_live' if changelog else '' -%}
    {%- set live_value = 'case when lakeplan_live then ' ~ name ~ ' end' if changelog else name -%}
    {%- set signed = 'case when lakeplan_live then ' ~ name ~ ' when lakeplan_retract then -' ~ name ~ ' end'
        if changelog else name -%}
    {%- set orderable = not modules.re.search('map\\s*<', data_type | lower) -%}
    {%- set template = rule.collapse_single if rule.collapse_single and not ordered else rule.collapse -%}
    {%- set value = lakeplan.lakeplan_merge_rule_sql(template, {
        'value': name, 'live': live_value, 'signed': signed, 'type': data_type,
        'sign': 'case when lakeplan_retract then -1 else 1 end' if changelog else '1',
        'order': 'case when ' ~ name ~ ' is not null' ~ live ~ ' then lakeplan_order end',
        'written_order': 'case when ' ~ written_by ~ live ~ ' then lakeplan_order end',
        'in_order': 'transform(array_sort(collect_list(case when ' ~ name ~ ' is not null' ~ live
            ~ " then named_struct('o', lakeplan_order, 'v', " ~ name ~ ') end), '
            ~ '(l, r) -> case when l.o < r.o then -1 when l.o > r.o then 1 else 0 end), e -> e.v)',
        'any': 'count(' ~ live_value ~ ') > 0',
        'single': 'max(' ~ live_value ~ ')' if orderable else 'first(' ~ live_value ~ ', true)',
        'delimiter': lakeplan.lakeplan_string_literal(delimiter or ''),
    }) -%}
    {%- if not rule.arithmetic -%}{{ return(value) }}{%- endif -%}
    {#- NULL from a value this run did have: the result left its type -#}
    {%- set result_type = lakeplan.lakeplan_merge_rule_sql(rule.arithmetic.result_type,
        {'type': data_type, 'sum_type': lakeplan.lakeplan_sum_type(data_type)}) -%}
    {%- set counted = signed if rule.retracts else live_value -%}
    {%- set total = 'coalesce(' ~ lakeplan.lakeplan_finite(value, result_type)
        ~ ', case when count(' ~ counted ~ ') > 0 then '
        ~ lakeplan.lakeplan_raise_value_error(overflow.message ~ ': the ' ~ rule.arithmetic.word
            ~ ' of this run\'s values for key', overflow.key, result_type, overflow.fix) ~ ' end)' -%}
    {{ return(lakeplan.lakeplan_checked_cast(total, result_type, data_type,
        overflow.message ~ ': this run\'s ' ~ rule.arithmetic.word ~ ' is', overflow.fix,
        'concat(cast(' ~ total ~ ' as string), \' for key \', ' ~ overflow.key ~ ')')) }}
{% endmacro %}

{#- The MERGE's new value of a column from the stored value and this run's. A rule that skips NULLs applies
    where both sides hold one (a NULL side leaves the other); an arithmetic result that leaves the column's type
    stops the write. `written`: whether this run wrote the column for the key (SQL). -#}
{% macro lakeplan_merge_rule_combine(rule, stored, change, data_type, written, delimiter, overflow) %}
    {%- set value = lakeplan.lakeplan_merge_rule_sql(rule.combine, {'stored': stored, 'change': change,
        'type': data_type, 'written': written, 'delimiter': lakeplan.lakeplan_string_literal(delimiter or '')}) -%}
    {%- if not rule.skips_null -%}{{ return(value) }}{%- endif -%}
    {%- set either = 'case when ' ~ change ~ ' is null then ' ~ stored ~ ' when ' ~ stored ~ ' is null then '
        ~ change ~ ' else ' -%}
    {%- if not rule.arithmetic -%}{{ return('cast(' ~ either ~ value ~ ' end as ' ~ data_type ~ ')') }}{%- endif -%}
    {%- set combined = 'concat(cast(' ~ stored ~ ' as string), \' ' ~ rule.arithmetic.operator ~ ' \', cast(' ~ change
        ~ ' as string), \' for key \', ' ~ overflow.key ~ ')' -%}
    {%- set result = lakeplan.lakeplan_finite('try_cast(' ~ value ~ ' as ' ~ data_type ~ ')', data_type) -%}
    {{ return(either ~ 'coalesce(' ~ result ~ ', '
        ~ lakeplan.lakeplan_raise_value_error(overflow.message ~ ' would become', combined, data_type, overflow.fix)
        ~ ') end') }}
{% endmacro %}

{#- A rule's SQL template with each `{name}` replaced by its SQL in `values`. -#}
{% macro lakeplan_merge_rule_sql(template, values) %}
    {%- set sql = namespace(text=template) -%}
    {%- for name, value in values.items() if '{' ~ name ~ '}' in template -%}
        {%- set sql.text = sql.text | replace('{' ~ name ~ '}', value) -%}
    {%- endfor -%}
    {{ return(sql.text) }}
{% endmacro %}

{#- Whether a stored row takes this run's values for a sequence group: a non-NULL version at least the
    stored one (Paimon's sequence-group). -#}
{% macro lakeplan_sequence_group_accepts(sequence) %}
    {%- set change = 'lakeplan_change.' ~ lakeplan.lakeplan_quote(sequence) -%}
    {%- set stored = 'lakeplan_table.' ~ lakeplan.lakeplan_quote(sequence) -%}
    {{ return(change ~ ' is not null and (' ~ stored ~ ' is null or ' ~ change ~ ' >= ' ~ stored ~ ')') }}
{% endmacro %}

{#- `value` (SQL of a member's value), stopping the write where the rule's value check refuses it (a value its SQL
    would fail on with a library's own words): the error names `sender` (who sends it, in which column), the key
    (`key`: SQL) and what the rule wants. -#}
{% macro lakeplan_merge_rule_checked_value(rule, value, sender, key, fix) %}
    {%- if not rule.value_check -%}{{ return(value) }}{%- endif -%}
    {{ return('case when ' ~ value ~ ' is not null and ' ~ lakeplan.lakeplan_merge_rule_sql(rule.value_check.refuses,
        {'value': value}) ~ ' then raise_error(concat(' ~ lakeplan.lakeplan_string_literal('lakeplan: ' ~ sender
        ~ ' a value that is not ' ~ rule.value_check.wants ~ ' for key ') ~ ', ' ~ key ~ ', '
        ~ lakeplan.lakeplan_string_literal('; this write stopped and committed nothing. Fix: ' ~ fix) ~ ')) else '
        ~ value ~ ' end') }}
{% endmacro %}

{#- What an arithmetic rule's overflow error names: the column, the target, the key (SQL over `prefix`-ed key
    columns) and the fix. -#}
{% macro lakeplan_merge_rule_overflow(spec, column, prefix) %}
    {{ return({
        'message': '`' ~ spec.model ~ '`.`' ~ column.name ~ '` (merge rule ' ~ spec.rules.get(column.name | lower) ~ ')',
        'key': lakeplan.lakeplan_key_json(spec, prefix),
        'fix': lakeplan.lakeplan_overflow_fix(spec, column),
    }) }}
{% endmacro %}

{#- The fix for a value `column` cannot hold: the type to declare. Iceberg widens the type it stores (a tinyint and a
    smallint are stored as an int) by its promotions (spark_types.PROMOTIONS) and a decimal's precision in place,
    keeping every stored value; a bigint becomes a decimal(38,0), and a decimal of 38 digits one with fewer digits after
    the point, only by a rebuild. No type holds more than a double or a decimal(38,0): then the values must be made
    smaller where they are computed (a product: the sum of their logarithms). -#}
{% macro lakeplan_overflow_fix(spec, column) %}
    {%- set type = lakeplan.lakeplan_normal_type(column.data_type) -%}
    {%- set decimal = lakeplan.lakeplan_decimal(type) -%}
    {%- set declare = 'declare `' ~ column.name ~ '` as ' -%}
    {%- set where = ' in `' ~ spec.model ~ '`\'s YAML' -%}
    {%- set promoted = lakeplan.lakeplan_types().promotions
        | selectattr(0, 'equalto', lakeplan.lakeplan_iceberg_type(type)) | map(attribute=1) | first -%}
    {%- set wider = 'decimal(38,' ~ decimal.scale ~ ')' if decimal and decimal.precision < 38 else promoted -%}
    {%- if wider -%}
        {{ return(declare ~ wider ~ where ~ '; the next run widens the stored column in place, keeping every value.') }}
    {%- endif -%}
    {%- set rebuilt = 'decimal(38,0)' if type == 'bigint' else 'decimal(38,' ~ (decimal.scale - 1) ~ ') or one with '
        ~ 'fewer digits after the point' if decimal and decimal.scale > 0 else none -%}
    {%- if rebuilt -%}
        {{ return(declare ~ rebuilt ~ where ~ ' and rebuild the table: dbt run -s ' ~ spec.model ~ ' --full-refresh '
            ~ '(Iceberg does not change ' ~ type ~ ' to it in place).') }}
    {%- endif -%}
    {{ return('no Spark number type holds a larger value than ' ~ type ~ ': make the values smaller where `'
        ~ spec.model ~ '`\'s members compute them' ~ (', or send the logarithm of each factor under merge rule sum '
        ~ 'in place of the product' if spec.rules.get(column.name | lower) == 'product' else '') ~ '.') }}
{% endmacro %}

{#- The type Spark's sum() returns for a column of `data_type`. -#}
{% macro lakeplan_sum_type(data_type) %}
    {%- set type = lakeplan.lakeplan_normal_type(data_type) -%}
    {%- set decimal = lakeplan.lakeplan_decimal(type) -%}
    {%- if decimal -%}
        {{ return('decimal(' ~ [38, decimal.precision + 10] | min ~ ',' ~ decimal.scale ~ ')') }}
    {%- elif type in ['float', 'double'] -%}{{ return('double') }}
    {%- endif -%}
    {{ return('bigint') }}
{% endmacro %}

{#- SQL: the row's key as JSON (`{"id":1}`), for an error; `prefix` qualifies the key columns. -#}
{% macro lakeplan_key_json(spec, prefix='') %}
    {%- set keys = [] -%}
    {%- for key in spec.unique_key -%}{%- do keys.append(prefix ~ lakeplan.lakeplan_quote(key)) -%}{%- endfor -%}
    {{ return('to_json(struct(' ~ keys | join(', ') ~ '))') }}
{% endmacro %}

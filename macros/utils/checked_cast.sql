{#- `expression` (of `from_type`, none when unknown) as `data_type`, never losing a value: Spark's default
    (non-ANSI) cast turns text it cannot parse and numbers that overflow into NULL, which a partial update then
    treats as "no value", and rounds away digits the type has no room for. Where a non-NULL value does not fit, or
    fits only rounded, the statement stops with `message` (a sentence naming where the value comes from), the value
    (or `shown`: SQL of the text that stands for it), the type and `fix` appended (a rounding's own fix); nothing is
    written. A cast that cannot lose a value (same type, widening) stays a plain cast. -#}
{% macro lakeplan_checked_cast(expression, from_type, data_type, message, fix, shown=none) %}
    {%- if from_type is not none and lakeplan.lakeplan_cast_is_lossless(from_type, data_type) -%}
        {{ return(expression if lakeplan.lakeplan_normal_type(from_type) == lakeplan.lakeplan_normal_type(data_type)
            else 'cast(' ~ expression ~ ' as ' ~ data_type ~ ')') }}
    {%- endif -%}
    {%- set exact = lakeplan.lakeplan_exact_value(expression, from_type, data_type) if from_type is not none -%}
    {%- if not exact -%}
        {{ return('coalesce(' ~ lakeplan.lakeplan_finite('try_cast(' ~ expression ~ ' as ' ~ data_type ~ ')', data_type)
            ~ ', case when ' ~ expression ~ ' is not null then '
            ~ lakeplan.lakeplan_raise_value_error(message, shown or expression, data_type, fix) ~ ' end)') }}
    {%- endif -%}
    {#- kept only where it equals the value, compared in a type that holds both exactly; text also as the doubles
        of both, which see the digits the decimal it is compared as had no room for (text into decimal(38,0)) -#}
    {%- set cast = 'try_cast(' ~ exact.value ~ ' as ' ~ data_type ~ ')' -%}
    {%- set same = cast ~ ' = ' ~ exact.value ~ (' and cast(cast(' ~ cast ~ ' as string) as double) = try_cast('
        ~ expression ~ ' as double)' if exact.text else '') -%}
    {#- NaN and infinity fit no exact type, however wide: their own fix -#}
    {%- set no_number = ' when ' ~ exact.no_number ~ ' then ' ~ lakeplan.lakeplan_raise_value_error(message,
        shown or expression, data_type, 'replace NaN and infinity where the value is computed (`nanvl(...)`, a `case`), '
        ~ 'or filter the row out.') if exact.no_number else '' -%}
    {{ return('coalesce(case when ' ~ same ~ ' then ' ~ cast ~ ' end, case when ' ~ expression
        ~ ' is null then null' ~ no_number ~ ' when ' ~ cast ~ ' is null then '
        ~ lakeplan.lakeplan_raise_value_error(message, shown or expression, data_type, fix) ~ ' else '
        ~ lakeplan.lakeplan_raise_value_error(message, shown or expression, data_type, exact.fix, cast) ~ ' end)') }}
{% endmacro %}

{#- Where a cast of `expression` (`from_type`) to `data_type` may round: {value, fix, text}, `value` the expression in
    a type that holds it exactly (text as a decimal with as many digits before the point as `data_type`, and as many
    after as fit; text into a date as a timestamp), `fix` how to keep it, `text` whether text becomes a number,
    `no_number` SQL of whether a float or double is NaN or infinite (none for other types); else none. Into an exact number (an integer or decimal type) from a decimal with more digits after the point, a float,
    a double or text; into a date from a timestamp or text. A float or double column holds approximate values by
    design. -#}
{% macro lakeplan_exact_value(expression, from_type, data_type) %}
    {%- set source, target = lakeplan.lakeplan_normal_type(from_type), lakeplan.lakeplan_normal_type(data_type) -%}
    {%- set source_decimal, target_decimal = lakeplan.lakeplan_decimal(source), lakeplan.lakeplan_decimal(target) -%}
    {%- set family = lakeplan.lakeplan_type_family(source) -%}
    {%- set digits = lakeplan.lakeplan_types().integer_digits -%}
    {%- if target == 'date' and family in ['timestamp', 'string'] -%}
        {{ return({'value': expression if family == 'timestamp' else 'try_cast(' ~ expression ~ ' as timestamp)',
            'text': false, 'no_number': none, 'fix': 'take its date where it is computed (`to_date(...)`), or declare the column a timestamp.'}) }}
    {%- endif -%}
    {%- set scale = target_decimal.scale if target_decimal else (0 if target in digits else none) -%}
    {%- if scale is none or (source_decimal and source_decimal.scale <= scale)
        or not (source_decimal or source in ['float', 'double'] or family == 'string') -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set before_point = target_decimal.precision - scale if target_decimal else digits[target] -%}
    {{ return({'value': 'try_cast(' ~ expression ~ ' as decimal(38,' ~ (38 - before_point) ~ '))'
            if family == 'string' else expression, 'text': family == 'string',
        'no_number': 'isnan(' ~ expression ~ ') or abs(' ~ expression ~ ") = double('infinity')"
            if source in ['float', 'double'] else none,
        'fix': 'round it where it is computed (`round(..., ' ~ scale ~ ')`), or declare the column with '
            ~ ('more digits after the point' if target_decimal else 'a decimal type') ~ '.'}) }}
{% endmacro %}

{#- `expression` of `data_type`, NULL where it is infinite: a float or double that overflows becomes infinity, not
    NULL, and would pass the checks that stop a write on NULL. Other types pass as they are. -#}
{% macro lakeplan_finite(expression, data_type) %}
    {%- if lakeplan.lakeplan_normal_type(data_type) not in ['float', 'double'] -%}{{ return(expression) }}{%- endif -%}
    {{ return('nullif(nullif(' ~ expression ~ ", double('infinity')), double('-infinity'))") }}
{% endmacro %}

{#- raise_error with lakeplan's one-line message: `message`, the value, the type it does not fit (or, given
    `rounded_sql`, would store only as that), and `fix`. -#}
{% macro lakeplan_raise_value_error(message, value_sql, data_type, fix, rounded_sql=none) %}
    {%- set stopped = 'this write stopped and committed nothing. Fix: ' ~ fix -%}
    {%- set held = lakeplan.lakeplan_string_literal(', which ' ~ data_type ~ ' cannot hold exactly: it would store ')
        ~ ', cast(' ~ rounded_sql ~ ' as string), ' ~ lakeplan.lakeplan_string_literal('; ' ~ stopped) if rounded_sql
        else lakeplan.lakeplan_string_literal(', which ' ~ data_type ~ ' cannot hold; ' ~ stopped) -%}
    {{ return('raise_error(concat(' ~ lakeplan.lakeplan_string_literal('lakeplan: ' ~ message ~ ' ')
        ~ ', coalesce(cast(' ~ value_sql ~ ' as string), \'NULL\'), ' ~ held ~ '))') }}
{% endmacro %}

{#- Spark's types as plugins/dbt_lakeplan/spark_types.py declares them: the running model's plan carries them, and
    every target's and upsert's plan the same, so a run-operation (lakeplan_maintain's fold) takes any one's. -#}
{% macro lakeplan_types() %}
    {%- set types = (config.get('lakeplan_plan') or {}).get('types') -%}
    {%- if types -%}{{ return(types) }}{%- endif -%}
    {%- for node in graph.nodes.values() if (node.config.get('lakeplan_plan') or {}).get('types') -%}
        {{ return(node.config.lakeplan_plan.types) }}
    {%- endfor -%}
    {{ return(lakeplan.lakeplan_plan().types) }}
{% endmacro %}

{#- A type name as Spark prints it: lower case, no spaces, aliases resolved (`integer` -> `int`). `types`: a node's
    plan's, where no model runs (a hook). -#}
{% macro lakeplan_normal_type(data_type, types=none) %}
    {%- set types = types or lakeplan.lakeplan_types() -%}
    {%- set name = data_type | lower | replace(' ', '') -%}
    {%- set base = name.split('(')[0] -%}
    {%- set name = types.aliases.get(base, base) ~ name[base | length:] -%}
    {{ return(types.bare.get(name, name)) }}
{% endmacro %}

{#- Whether every value of `from_type` has a value in `to_type` (so the cast never yields NULL): the same type,
    a NULL literal, anything atomic into string, or a widening of integers, decimals, floats and dates. -#}
{% macro lakeplan_cast_is_lossless(from_type, to_type) %}
    {%- set source, target = lakeplan.lakeplan_normal_type(from_type), lakeplan.lakeplan_normal_type(to_type) -%}
    {%- set digits = lakeplan.lakeplan_types().integer_digits -%}
    {%- set source_decimal, target_decimal = lakeplan.lakeplan_decimal(source), lakeplan.lakeplan_decimal(target) -%}
    {%- if source == target or source == 'void' -%}{{ return(true) }}
    {%- elif target == 'string' -%}
        {{ return(lakeplan.lakeplan_type_family(source) in ['numeric', 'string', 'boolean', 'date', 'timestamp']) }}
    {%- elif source in digits and target in digits -%}{{ return(digits[source] <= digits[target]) }}
    {%- elif source in digits and target_decimal -%}
        {{ return(digits[source] <= target_decimal.precision - target_decimal.scale) }}
    {%- elif source_decimal and target_decimal -%}
        {{ return(source_decimal.scale <= target_decimal.scale and source_decimal.precision - source_decimal.scale
            <= target_decimal.precision - target_decimal.scale) }}
    {%- endif -%}
    {{ return([source, target] in lakeplan.lakeplan_types().lossless) }}
{% endmacro %}

{#- The type an Iceberg table stores a column declared `data_type` as, as Spark shows it (a varchar(n) as string, a
    tinyint as int: spark_types.STORED_AS). -#}
{% macro lakeplan_iceberg_type(data_type, types=none) %}
    {%- set types = types or lakeplan.lakeplan_types() -%}
    {%- set type = lakeplan.lakeplan_normal_type(data_type, types) -%}
    {{ return(types.stored_as.get(type.split('(')[0], type)) }}
{% endmacro %}

{#- Whether Iceberg changes a column's type `from_type` to `to_type` in place, keeping its values: its type
    promotions between the types it stores them as, and a decimal's precision widened at the same scale
    (spark_types.promoted_from, the same rule). -#}
{% macro lakeplan_iceberg_widens(from_type, to_type) %}
    {%- set source, target = lakeplan.lakeplan_iceberg_type(from_type), lakeplan.lakeplan_iceberg_type(to_type) -%}
    {%- set old, new = lakeplan.lakeplan_decimal(source), lakeplan.lakeplan_decimal(target) -%}
    {%- if old and new -%}{{ return(old.scale == new.scale and new.precision >= old.precision) }}{%- endif -%}
    {{ return([source, target] in lakeplan.lakeplan_types().promotions) }}
{% endmacro %}

{#- A type as Spark prints it (lakeplan_normal_type) -> {precision, scale} when it is a decimal, else none. -#}
{% macro lakeplan_decimal(normal_type) %}
    {%- set found = modules.re.match('^decimal\\((\\d+),(\\d+)\\)$', normal_type) -%}
    {{ return({'precision': found.group(1) | int, 'scale': found.group(2) | int} if found else none) }}
{% endmacro %}

{#- A type's family (spark_types.FAMILIES). -#}
{% macro lakeplan_type_family(data_type) %}
    {%- set base = (data_type | lower | trim).split('(')[0].split('<')[0] | trim -%}
    {{ return(lakeplan.lakeplan_types().families.get(base, 'complex')) }}
{% endmacro %}

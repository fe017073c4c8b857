{#- The per-row guard of changelog and member rows, as one SQL expression: a NULL key or an unknown op stops the
    statement with `raise_error`, so nothing is written; else true. `where` says which rows, e.g.
    " in model `orders` (op column `_op`)"; `op_column`: none for rows without an op; `table`, the model whose table
    stays unchanged, and `query`, where the fix goes (e.g. "`orders`'s query"). -#}
{% macro lakeplan_row_guard(keys, op_column, where, table, query) %}
    {%- set unchanged = '; `' ~ table ~ '` is unchanged. Fix: ' -%}
    {%- set null_keys = [] -%}
    {%- for key in keys -%}{%- do null_keys.append(lakeplan.lakeplan_quote(key) ~ ' is null') -%}{%- endfor -%}
    {%- set checks = ['when ' ~ null_keys | join(' or ') ~ ' then raise_error('
        ~ lakeplan.lakeplan_string_literal('NULL primary key (' ~ keys | join(', ') ~ ')' ~ where ~ unchanged
        ~ 'filter out the rows whose key is NULL in ' ~ query ~ ', or give them a key.') ~ ')'] -%}
    {%- if op_column -%}
        {%- set op = lakeplan.lakeplan_quote(op_column) -%}
        {%- set quote = lakeplan.lakeplan_string_literal("'") -%}
        {%- do checks.append('when ' ~ op ~ ' is null or ' ~ op ~ " not in ('+I', '+U', '-U', '-D') then raise_error("
            ~ "concat('Invalid changelog op ', coalesce(concat(" ~ quote ~ ', ' ~ op ~ ', ' ~ quote ~ "), 'NULL'), "
            ~ lakeplan.lakeplan_string_literal(where ~ ': expected +I, +U, -U or -D' ~ unchanged ~ 'map the values of `'
            ~ op_column ~ '` in ' ~ query ~ ' to +I, +U, -U and -D.') ~ '))') -%}
    {%- endif -%}
    {{ return('case ' ~ checks | join(' ') ~ ' else true end') }}
{% endmacro %}

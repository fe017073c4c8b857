{#- The source table node that `source(source_name, table_name)` resolves to. -#}
{% macro lakeplan_source_node(source_name, table_name) %}
    {% for node in graph.sources.values() if node.source_name == source_name and node.name == table_name %}
        {{ return(node) }}
    {% endfor %}
    {% do exceptions.raise_compiler_error(
        "Source `" ~ source_name ~ "." ~ table_name ~ "` is not defined in any sources YAML.") %}
{% endmacro %}

{#- The validated scan settings of one source table, read from its `meta:`. Every setting is checked here,
    before any SQL runs, and an error names the source, the setting, its value and the fix. -#}
{% macro lakeplan_scan_spec(node) %}
    {%- set meta = node.meta or {} -%}
    {%- set owner = 'source `' ~ node.source_name ~ '.' ~ node.name ~ '`' -%}
    {%- set spec = {
        'owner': owner,
        'parallelism': meta.get('scan_parallelism'),
        'changelog_mode': meta.get('changelog_mode', 'insert_only'),
        'primary_key': lakeplan.lakeplan_name_list(meta.get('primary_key'), owner, 'primary_key'),
        'op_column': meta.get('op_column', '_op'),
        'sequence_by': meta.get('sequence_by'),
        'datagen': meta.get('datagen'),
        'keyed': lakeplan.lakeplan_keyed_spec(meta.get('pre_keyed_by'), meta.get('key_groups'), owner, 'pre_keyed_by'),
    } -%}
    {%- if spec.parallelism is not none -%}
        {%- do lakeplan.lakeplan_check_parallelism(spec.parallelism, owner, 'meta.scan_parallelism') -%}
    {%- endif -%}
    {%- set modes = ['insert_only', 'upsert', 'all'] -%}
    {%- if spec.changelog_mode not in modes -%}
        {%- do exceptions.raise_compiler_error(
            'Unknown changelog_mode ' ~ spec.changelog_mode | tojson ~ ' for ' ~ owner ~ ' (`meta.changelog_mode`).\n'
            ~ 'Allowed: ' ~ modes | join(', ') ~ ' (insert_only: +I rows only; upsert: +I, +U, -D; all: also -U).\n'
            ~ 'Fix: set `changelog_mode` to one of them, or remove it for an insert-only source.') -%}
    {%- endif -%}
    {%- if spec.changelog_mode != 'insert_only' and not spec.primary_key -%}
        {%- do exceptions.raise_compiler_error(
            owner ~ ' is a changelog source (changelog_mode: ' ~ spec.changelog_mode ~ ') without `meta.primary_key`.\n'
            ~ 'Updates and deletes of one key must reach one partition in order, which needs the key.\n'
            ~ 'Fix: add `primary_key: [<column>, ...]` under the source table\'s meta.') -%}
    {%- endif -%}
    {%- if spec.keyed and spec.parallelism is not none and spec.parallelism != spec.keyed.key_groups -%}
        {%- do exceptions.raise_compiler_error(
            owner ~ ' is pre-keyed into ' ~ spec.keyed.key_groups ~ ' key groups but sets scan_parallelism '
            ~ spec.parallelism ~ '.\nRepartitioning a keyed source breaks its keyedness: every keyed operator after it'
            ~ ' would need a shuffle again (the hazard FLIP-367 names for implicitly keyed streams).\n'
            ~ 'Fix: set scan_parallelism to ' ~ spec.keyed.key_groups ~ ' (the scan already runs one task per key '
            ~ 'group) or remove it.') -%}
    {%- endif -%}
    {%- set keyed_by_other = spec.keyed
        and spec.keyed['keys'] | map('lower') | list != spec.primary_key | map('lower') | list -%}
    {%- if spec.changelog_mode != 'insert_only' and keyed_by_other -%}
        {%- do exceptions.raise_compiler_error(
            owner ~ ' is a changelog pre-keyed by ' ~ spec.keyed['keys'] | tojson ~ ', not by its primary_key '
            ~ spec.primary_key | tojson ~ ': changes of one key could sit in different buckets, out of order.\n'
            ~ 'Fix: bucket the table by the primary key and declare `pre_keyed_by` the same.') -%}
    {%- endif -%}
    {%- if spec.keyed and spec.datagen -%}
        {%- do exceptions.raise_compiler_error(owner ~ ' is a datagen source and cannot be pre_keyed_by: it has no '
            ~ 'bucketed table.\nFix: remove `pre_keyed_by` and `key_groups` from its meta.') -%}
    {%- endif -%}
    {{ return(spec) }}
{% endmacro %}

{#- A list of column names from YAML: a single name becomes a one-item list; anything else raises. -#}
{% macro lakeplan_name_list(value, owner, setting) %}
    {%- if value is none -%}{{ return([]) }}{%- endif -%}
    {%- set names = [value] if value is string else value -%}
    {%- if names is not iterable or names is mapping or names | select('string') | list | length != names | length -%}
        {%- do exceptions.raise_compiler_error(
            'Invalid `' ~ setting ~ '` ' ~ value | tojson ~ ' for ' ~ owner ~ ': expected a column name or a list of them.\n'
            ~ 'Fix: write it as `' ~ setting ~ ': [column_a, column_b]`.') -%}
    {%- endif -%}
    {{ return(names | list) }}
{% endmacro %}

{#- Raises when a setting names a column the source does not have (compared case-insensitively, as Spark does). -#}
{% macro lakeplan_check_source_columns(spec, columns) %}
    {%- set settings = [('primary_key', spec.primary_key)] -%}
    {%- if spec.sequence_by -%}{%- do settings.append(('sequence_by', [spec.sequence_by])) -%}{%- endif -%}
    {%- if spec.changelog_mode != 'insert_only' -%}
        {%- do settings.append(('op_column', [spec.op_column])) -%}
    {%- endif -%}
    {%- set missing = lakeplan.lakeplan_missing_column(settings, columns) -%}
    {%- if missing -%}
        {%- do exceptions.raise_compiler_error(
            spec.owner ~ ' sets `meta.' ~ missing[0] ~ '` to a column it does not have: `' ~ missing[1] ~ '`.\n'
            ~ 'Its columns: ' ~ columns | join(', ') ~ '.\n'
            ~ 'Fix: name one of those columns in `' ~ missing[0] ~ '`, or add the column to the source.') -%}
    {%- endif -%}
{% endmacro %}

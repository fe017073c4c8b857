{#- `rows` deterministic rows from Spark's range(0, rows, 1, parallelism), as Flink's datagen connector:
    the scan itself runs with `parallelism` partitions. `columns` maps each column name to a SQL
    expression over `id` (0 .. rows - 1); `where`, a condition on `id`, keeps only some of the rows. -#}
{% macro datagen(rows, columns, parallelism=none, where=none) %}
    {{ return(adapter.dispatch('datagen', 'lakeplan')(rows, columns, parallelism, where)) }}
{% endmacro %}

{% macro default__datagen(rows, columns, parallelism, where) %}
    {%- if rows is not integer or rows < 0 -%}
        {%- do exceptions.raise_compiler_error(
            'datagen: `rows` must be a whole number of at least 0, got ' ~ rows | tojson ~ '.') -%}
    {%- endif -%}
    {%- set range_arguments = [0, rows, 1] + ([parallelism] if parallelism is not none else []) -%}
    {%- set projections = [] -%}
    {%- for name, expression in columns.items() -%}
        {%- do projections.append(expression ~ ' as ' ~ lakeplan.lakeplan_quote(name)) -%}
    {%- endfor -%}
    {%- set filter = ' where ' ~ where if where else '' -%}
    {%- set generator = 'range(' ~ range_arguments | join(', ') ~ ') as lakeplan_datagen' -%}
    {{ return('(select ' ~ projections | join(', ') ~ ' from ' ~ generator ~ filter ~ ')') }}
{% endmacro %}

{#- A deterministic changelog over keys 1 .. `keys`, `versions` events per key, in Flink's RowKind terms:
    version 0 is +I, later versions +U (preceded by a -U with the old values in mode `all`), and the last
    version of every 4th key is -D. The sequence is version * keys + key. Columns: the key, `op_column`,
    `sequence_column`, `status`, `amount`, and `_batch`: the run in which a row arrives. Version 1 of
    every 7th key arrives two batches late, after newer versions of its key. -#}
{% macro datagen_changelog(
    keys, versions, mode='all', key_column='id', op_column='_op', sequence_column='_seq', parallelism=none
) %}
    {{ return(adapter.dispatch('datagen_changelog', 'lakeplan')(
        keys, versions, mode, key_column, op_column, sequence_column, parallelism)) }}
{% endmacro %}

{% macro default__datagen_changelog(keys, versions, mode, key_column, op_column, sequence_column, parallelism) %}
    {#- id = 2 * event + image: image 1 is the event itself, image 0 the -U before image of an update -#}
    {%- set event = '(id div 2)' -%}
    {%- set key = '(' ~ event ~ ' % ' ~ keys ~ ' + 1)' -%}
    {%- set version = '(' ~ event ~ ' div ' ~ keys ~ ')' -%}
    {%- set is_delete = '(' ~ version ~ ' = ' ~ (versions - 1) ~ ' and ' ~ key ~ ' % 4 = 0'
        ~ ' and ' ~ version ~ ' > 0)' -%}
    {%- set kind = 'case when ' ~ version ~ ' = 0 then \'+I\' when ' ~ is_delete ~ ' then \'-D\' else \'+U\' end' -%}
    {%- set op = 'case when id % 2 = 0 then \'-U\' else ' ~ kind ~ ' end' -%}
    {%- set value_version = 'case when id % 2 = 0 or ' ~ is_delete ~ ' then ' ~ version ~ ' - 1'
        ~ ' else ' ~ version ~ ' end' -%}
    {%- set columns = {
        key_column: 'cast(' ~ key ~ ' as bigint)',
        op_column: op,
        sequence_column: 'cast(' ~ version ~ ' * ' ~ keys ~ ' + ' ~ key ~ ' as bigint)',
        'status': "element_at(array('O', 'P', 'F'), cast((" ~ value_version ~ ') % 3 + 1 as int))',
        'amount': 'cast((' ~ key ~ ' * 37 + (' ~ value_version ~ ') * 11) % 1000 + 0.25 as decimal(12, 2))',
        '_batch': 'cast(' ~ version ~ ' + case when ' ~ version ~ ' = 1 and ' ~ key ~ ' % 7 = 0'
            ~ ' then 2 else 0 end as int)',
    } -%}
    {%- set kept = 'id % 2 = 1' ~ (' or ' ~ kind ~ ' = \'+U\'' if mode == 'all' else '') -%}
    {{ return(lakeplan.datagen(keys * versions * 2, columns, parallelism, where=kept)) }}
{% endmacro %}

{#- The scan of a source whose meta declares `datagen:` (no physical table): {sql, columns, partitioned},
    `partitioned` meaning the rows are already distributed as the source declares. -#}
{% macro lakeplan_datagen_scan(spec) %}
    {%- set options = spec.datagen -%}
    {%- if options.changelog is defined -%}
        {%- set changelog = options.changelog -%}
        {%- set key = spec.primary_key | first -%}
        {%- set sequence = spec.sequence_by or '_seq' -%}
        {%- set sql = lakeplan.datagen_changelog(
            changelog['keys'], changelog['versions'], spec.changelog_mode,
            key, spec.op_column, sequence, spec.parallelism) -%}
        {%- set columns = [key, spec.op_column, sequence, 'status', 'amount', '_batch'] -%}
    {%- else -%}
        {%- set sql = lakeplan.datagen(options.rows, options.fields, spec.parallelism) -%}
        {%- set columns = options.fields.keys() | list -%}
    {%- endif -%}
    {#- range() partitions are the scan parallelism of insert-only rows, but a changelog still needs its
        rows hashed onto the key, so only the former is already distributed as declared -#}
    {%- set partitioned = spec.parallelism is not none and options.changelog is not defined -%}
    {{ return({'sql': sql, 'columns': columns, 'partitioned': partitioned}) }}
{% endmacro %}

{#- The bucketing of a real table, read from DESCRIBE TABLE EXTENDED: {bucketed_by: [...] or none, buckets: N or
    none, text: a readable description, transforms: its Iceberg partition transforms as Spark writes them}.
    Iceberg: one `bucket(N, col)` partition transform. Spark datasource tables: Bucket Columns / Num Buckets. -#}
{% macro lakeplan_table_layout(relation) %}
    {%- set rows = run_query('describe table extended ' ~ relation).rows -%}
    {%- set transforms = [] -%}
    {%- set details = {} -%}
    {%- for row in rows -%}
        {%- if row[0] is string and modules.re.match('^Part [0-9]+$', row[0]) -%}
            {%- do transforms.append(row[1]) -%}
        {%- elif row[0] in ['Num Buckets', 'Bucket Columns'] -%}
            {%- do details.update({row[0]: row[1]}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if details -%}
        {%- set quoted = modules.re.findall('`((?:[^`]|``)*)`', details['Bucket Columns']) -%}
        {%- set columns = quoted | map('replace', '``', '`') | list -%}
        {%- set buckets = details['Num Buckets'] | int -%}
        {{ return({'bucketed_by': columns, 'buckets': buckets,
                   'text': 'bucketed by ' ~ columns | tojson ~ ' into ' ~ buckets ~ ' buckets', 'transforms': []}) }}
    {%- endif -%}
    {%- set bucket_transforms = [] -%}
    {%- for transform in transforms if transform.startswith('bucket(') -%}
        {%- do bucket_transforms.append(transform) -%}
    {%- endfor -%}
    {%- if bucket_transforms | length == 1 -%}
        {%- set parsed = modules.re.match('^bucket\\(([0-9]+), *(.+)\\)$', bucket_transforms[0]) -%}
        {%- set column = parsed.group(2).strip('`') -%}
        {{ return({'bucketed_by': [column], 'buckets': parsed.group(1) | int,
                   'text': 'bucketed by ' ~ [column] | tojson ~ ' into ' ~ parsed.group(1) ~ ' buckets',
                   'transforms': transforms}) }}
    {%- endif -%}
    {%- set text = 'partitioned by ' ~ transforms | join(', ') if transforms else 'not bucketed or partitioned' -%}
    {{ return({'bucketed_by': none, 'buckets': none, 'text': text, 'transforms': transforms}) }}
{% endmacro %}

{#- Raises unless the table's real layout is exactly the declared keyed layout: never a silent wrong answer.
    `setting`: where the layout is declared; `fix`: how this table gets the declared layout. -#}
{% macro lakeplan_check_keyed_layout(relation, keyed, owner, setting, fix) %}
    {%- set layout = lakeplan.lakeplan_table_layout(relation) -%}
    {%- set declared = keyed['keys'] | map('lower') | list -%}
    {%- set actual = (layout.bucketed_by or []) | map('lower') | list -%}
    {%- if actual != declared or layout.buckets != keyed.key_groups -%}
        {%- do exceptions.raise_compiler_error(
            owner ~ ' declares ' ~ setting ~ ' ' ~ keyed['keys'] | tojson ~ ' with key_groups ' ~ keyed.key_groups
            ~ ', but its table ' ~ relation ~ ' is ' ~ layout.text ~ '.\n'
            ~ 'Keyed work over it would group rows that are not together, so lakeplan will not treat it as keyed.\n'
            ~ 'Fix: ' ~ fix) -%}
    {%- endif -%}
{% endmacro %}

{#- An incremental keyed model keeps its table between runs, so a changed `keyed_by` / `key_groups` would
    silently keep the old layout: checked before each incremental write. -#}
{% macro lakeplan_check_model_layout() %}
    {%- set keyed = lakeplan.lakeplan_plan().keyed -%}
    {%- if keyed -%}
        {%- do lakeplan.lakeplan_check_keyed_layout(this, keyed, 'model `' ~ model.name ~ '`', 'keyed_by',
            'rebuild the table with the declared layout: dbt run --full-refresh -s ' ~ model.name
            ~ ', or declare the layout it has.') -%}
    {%- endif -%}
{% endmacro %}

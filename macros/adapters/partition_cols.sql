{#- dbt-spark's partition clause, plus a keyed model's layout: `keyed_by` + `key_groups` add Iceberg's
    bucket(key_groups, key) transform, which Spark reads as a key-grouped partitioning (no shuffle for
    GROUP BY, windows and joins on the key). -#}
{% macro spark__partition_cols(label, required=false) %}
    {%- set columns = lakeplan.lakeplan_partition_transforms() -%}
    {%- if columns %}{{ label }} ({{ columns | join(', ') }}){% endif -%}
{% endmacro %}

{#- The partition transforms the model being built creates its table with, as written: its `partition_by`, and a
    keyed model's bucket(key_groups, key). -#}
{% macro lakeplan_partition_transforms() %}
    {%- set partition_by = config.get('partition_by') -%}
    {%- set columns = [] if partition_by is none else ([partition_by] if partition_by is string else partition_by) -%}
    {#- seeds and snapshots share this clause and have no plan -#}
    {%- set keyed = lakeplan.lakeplan_plan().keyed if model.resource_type == 'model' else none -%}
    {%- if keyed -%}{%- set columns = columns + [lakeplan.lakeplan_keyed_transform(keyed)] -%}{%- endif -%}
    {{ return(columns) }}
{% endmacro %}

{#- A keyed model's partition transform: bucket(key_groups, key). -#}
{% macro lakeplan_keyed_transform(keyed) %}
    {{ return('bucket(' ~ keyed.key_groups ~ ', ' ~ lakeplan.lakeplan_quote(keyed['keys'][0]) ~ ')') }}
{% endmacro %}

{#- Before the model being built replaces its existing Iceberg table `relation` (a --full-refresh; a table model's
    every run): Iceberg names a bucket or truncate partition field after its column alone (`k_bucket`), and a
    REPLACE TABLE that changes its width keeps the old field in the table's history and adds a new one of the same
    name, after which Iceberg cannot read the table's metadata tables (its files: every later maintenance of it
    fails). Such a rebuild stops before anything is written, with the way that works. -#}
{% macro lakeplan_check_partition_widths(relation) %}
    {%- set declared = lakeplan.lakeplan_partition_widths(lakeplan.lakeplan_partition_transforms()) -%}
    {%- if not declared -%}{{ return(none) }}{%- endif -%}
    {%- set stored = lakeplan.lakeplan_partition_widths(lakeplan.lakeplan_table_layout(relation).transforms) -%}
    {%- set keyed = lakeplan.lakeplan_plan().keyed -%}
    {%- for field, transform in declared.items() if field in stored and stored[field].width != transform.width -%}
        {%- set setting = 'key_groups ' ~ keyed.key_groups
            if keyed and transform.text == lakeplan.lakeplan_keyed_transform(keyed) else 'partition_by' -%}
        {%- do exceptions.raise_compiler_error('`' ~ model.name ~ '` sets ' ~ setting ~ ' (' ~ transform.text
            ~ '), but its table ' ~ relation ~ ' is partitioned by ' ~ stored[field].text
            ~ ': Iceberg would give the new partition field the old '
            ~ "one's name (`" ~ field ~ '`) and could then no longer read the table\'s metadata, so nothing was '
            ~ 'written. Fix: drop the table first (`drop table ' ~ relation ~ '`, e.g. `spark-sql -e "drop table '
            ~ relation ~ '"` in the activated venv), then run `dbt run -s ' ~ model.name ~ ' --full-refresh`; or keep '
            ~ stored[field].text ~ '.') -%}
    {%- endfor -%}
{% endmacro %}

{#- The bucket and truncate transforms among `transforms` (as Spark writes them, `bucket(8, k)`), by the name
    Iceberg gives their partition field: {`k_bucket`: {width, text}}. -#}
{% macro lakeplan_partition_widths(transforms) %}
    {%- set fields = {} -%}
    {%- for transform in transforms -%}
        {%- set parsed = modules.re.match('^\\s*(bucket|truncate)\\s*\\(\\s*([^,]+?)\\s*,\\s*([^,]+?)\\s*\\)\\s*$',
            transform, modules.re.IGNORECASE) -%}
        {%- if parsed -%}
            {%- set first, second = parsed.group(2), parsed.group(3) -%}
            {%- set column, width = (second, first) if first.isdigit() else (first, second) -%}
            {%- do fields.update({column.strip('`') | lower ~ ('_bucket' if parsed.group(1) | lower == 'bucket'
                else '_trunc'): {'width': width | int, 'text': transform}}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(fields) }}
{% endmacro %}

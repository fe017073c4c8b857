{#- Reads a source with its declared distribution (Flink FLIP-367 `scan.parallelism`): a relation for
    FROM / JOIN. Without `scan_parallelism` it is exactly `source()`; with it, this source's stage alone
    is repartitioned: round-robin for insert-only sources, hashed on the primary key for changelogs.
    A pre-keyed source is checked against its real bucketing and read as it is (no shuffle). -#}
{% macro scan_source(source_name, table_name) %}
    {{ return(adapter.dispatch('scan_source', 'lakeplan')(source_name, table_name)) }}
{% endmacro %}

{% macro default__scan_source(source_name, table_name) %}
    {%- set relation = source(source_name, table_name) -%}
    {%- if not execute -%}{{ return(relation) }}{%- endif -%}
    {%- set spec = lakeplan.lakeplan_plan(lakeplan.lakeplan_source_node(source_name, table_name)) -%}
    {%- if spec.datagen -%}
        {%- set scan = lakeplan.lakeplan_datagen_scan(spec) -%}
        {%- do lakeplan.lakeplan_check_source_columns(spec, scan.columns) -%}
    {%- else -%}
        {%- set scan = {'sql': relation, 'partitioned': spec.keyed is not none} -%}
        {#- the table itself: under --empty `relation` renders as a subquery, which DESCRIBE cannot read -#}
        {%- set table = api.Relation.create(database=relation.database, schema=relation.schema,
            identifier=relation.identifier, type=relation.type) -%}
        {%- if spec.keyed -%}
            {%- do lakeplan.lakeplan_check_keyed_layout(table, spec.keyed, spec.owner, 'pre_keyed_by',
                'declare the table\'s real layout, or rebuild the table bucketed by the declared key into '
                ~ spec.keyed.key_groups ~ ' buckets.') -%}
        {%- endif -%}
        {%- if spec.primary_key or spec.sequence_by or spec.changelog_mode != 'insert_only' -%}
            {%- set columns = adapter.get_columns_in_relation(table) | map(attribute='name') | list -%}
            {%- if columns -%}{%- do lakeplan.lakeplan_check_source_columns(spec, columns) -%}{%- endif -%}
        {%- endif -%}
    {%- endif -%}
    {%- if spec.parallelism is none -%}
        {{ return(scan.sql) }}
    {%- elif scan.partitioned -%}
        {#- datagen scans with `scan_parallelism` partitions, as Flink's datagen does; a pre-keyed table
            scans one task per key group, which scan_parallelism equals (checked) -#}
        {{ return(scan.sql) }}
    {%- elif spec.changelog_mode != 'insert_only' -%}
        {{ return(lakeplan.lakeplan_repartition(scan.sql, spec.parallelism, spec.primary_key)) }}
    {%- else -%}
        {{ return(lakeplan.lakeplan_repartition(scan.sql, spec.parallelism)) }}
    {%- endif -%}
{% endmacro %}

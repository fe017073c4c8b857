{#- How the MERGE of an `upsert` or a partial-update target lands in the existing `relation` (its plan's
    `change_mode`): copy-on-write rewrites every data file the change touches; merge-on-read writes delete files
    (position deletes, or deletion vectors on a format-version 3 table) beside them and leaves the rewrite to
    compaction. Iceberg reads the choice from the table's write.*.mode properties, so a write that changes it
    first alters them (a change of metadata, not of rows). `auto` chooses merge-on-read where the rows this run's
    inputs hold, by Spark's plan of `reads` (a query over the members or the staged changes), are at most
    `merge_on_read_max_share` of the table's rows (or of the model's maintenance.deleted_share, where lower and
    maintenance runs after the write: a change that large would be compacted at once, and copy-on-write rewrites
    once instead of twice): a run that reads what is new reads a small share; one that
    recomputes every key reads at least the table. An input without a row count (not Iceberg) counts as the
    whole table; data in the query itself (VALUES) counts nothing. Returns its mode, the reason, and `sql`, the ALTER to run before the write, or none. -#}
{% macro lakeplan_change_mode(relation, reads) %}
    {%- set setting = lakeplan.lakeplan_plan().change_mode -%}
    {%- if setting.mode == 'delta' -%}
        {#- the table is not written: the change goes to its delta (delta.sql) -#}
        {{ return({'mode': 'delta', 'reason': 'change_mode: delta', 'sql': none}) }}
    {%- endif -%}
    {%- set mode = setting.mode | replace('_', '-') -%}
    {%- set reason = 'change_mode: ' ~ setting.mode -%}
    {%- if setting.mode == 'auto' -%}
        {#- the rows the table holds: its data files' rows, as the summary of its current snapshot totals them (the
            metadata, not the manifests; else counted over its files), less the rows its delete files remove, of those
            a live data file needs (lakeplan_live_deletes_sql: not those a compaction left behind, which the summary
            still counts) -#}
        {%- set table_rows = run_query("select coalesce((select cast(summary['total-records'] as bigint) from "
            ~ relation ~ '.snapshots where snapshot_id = (select snapshot_id from ' ~ relation ~ ".refs where name = "
            ~ "'main')), (select coalesce(sum(record_count), 0) from " ~ relation ~ '.data_files)) - (select '
            ~ 'coalesce(sum(if(live, record_count, 0)), 0) from (' ~ lakeplan.lakeplan_live_deletes_sql(relation)
            ~ '))')
            .columns[0].values()[0] -%}
        {%- set plan = run_query('explain cost ' ~ reads).rows[0][0].split('== Physical Plan ==')[0] -%}
        {%- set leaves = modules.re.findall('RelationV2\\[[^\\]]*\\] \\S+, Statistics\\(([^)]*)\\)', plan)
            + modules.re.findall('(?<![A-Za-z])(?:Relation|HiveTableRelation|LogicalRDD|InMemoryRelation)\\b[^\\n]*Statistics\\(([^)]*)\\)', plan) -%}
        {%- set counts = [] -%}
        {%- for statistics in leaves -%}
            {%- set count = modules.re.search('rowCount=([0-9.E+]+)', statistics) -%}
            {%- do counts.append(count.group(1) | float if count else none) -%}
        {%- endfor -%}
        {%- set known = counts | reject('none') | list -%}
        {%- set read = known | sum | int -%}
        {%- set limit = table_rows * setting.share -%}
        {%- set small = known | length == counts | length and read <= limit -%}
        {%- set mode = 'merge-on-read' if small else 'copy-on-write' -%}
        {%- set reason = ('the inputs hold ' ~ read ~ ' rows' if known | length == counts | length
            else 'an input has no row count') ~ ' against the table\'s ' ~ table_rows ~ ', ' ~ setting.share_from ~ ' '
            ~ setting.share ~ (', past which the write would be compacted at once'
            if setting.share_from == 'maintenance.deleted_share' else '') -%}
    {%- endif -%}
    {%- set properties = lakeplan.lakeplan_table_properties(relation) -%}
    {%- set modes = ['write.merge.mode', 'write.update.mode', 'write.delete.mode'] -%}
    {%- set differ = [] -%}
    {%- for key in modes if properties.get(key, 'copy-on-write') != mode -%}{%- do differ.append(key) -%}{%- endfor -%}
    {%- set assignments = [] -%}
    {%- for key in modes -%}{%- do assignments.append("'" ~ key ~ "' = '" ~ mode ~ "'") -%}{%- endfor -%}
    {{ return({'mode': mode, 'reason': reason,
        'sql': 'alter table ' ~ relation ~ ' set tblproperties (' ~ assignments | join(', ') ~ ')' if differ else none}) }}
{% endmacro %}

{#- The log line that says how a write lands and why, once per write. -#}
{% macro lakeplan_log_change_mode(change) %}
    {%- do log('lakeplan: `' ~ model.name ~ '` lands its change ' ~ change.mode ~ ' (' ~ change.reason ~ ')',
        info=true) -%}
{% endmacro %}

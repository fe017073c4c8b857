{#- What a target's write applied, so that an exact repeat of it writes nothing. A `sum` (or another rule that counts
    the same rows twice: lakeplan_counted_columns) adds what a run sends: a rerun of a run that did commit (a killed
    process, a lost terminal: the user could not tell) would count it twice. Each write of a target with such a
    column tags the snapshot it committed `lakeplan_applied_<digest>`, the digest of the target's logic (as the state
    check compares it, less the columns' types: fingerprint.rerun_logic), each member's query as this run renders it, and the snapshot every table the members read was at. A run whose digest
    tags a snapshot in the table's current history already holds its rows.
    Only inputs whose state has a name are recognised: the members read at least one Iceberg table, every relation
    they read is one (or data in the query itself) and none reads the clock; otherwise nothing is skipped, and a
    member that sends the same constant rows every run adds them every run. -#}

{#- Spark's analyzed plan of every member: the leaves it reads and the functions of the clock, if any. -#}
{% macro lakeplan_partial_update_inputs(write_groups) %}
    {%- set reads = [] -%}
    {%- for write_group in write_groups -%}
        {%- for member in write_group.members -%}{%- do reads.append('select 1 from ' ~ member.view) -%}{%- endfor -%}
    {%- endfor -%}
    {%- set text = run_query('explain extended ' ~ reads | join(' union all ')).rows[0][0] -%}
    {%- set analyzed = text.split('== Analyzed Logical Plan ==')[1].split('== Optimized Logical Plan ==')[0] -%}
    {#- catalog.schema.table: a metadata table's name (`….orders.changes`, what new_rows reads) has one more part -#}
    {%- set iceberg = modules.re.findall('\\+- RelationV2\\[[^\\]]*\\] ([^.\\s,]+\\.[^.\\s,]+\\.[^.\\s,]+)',
        analyzed) | unique | sort -%}
    {#- a leaf of another kind (a file or Hive table, a cached or streamed plan) has no snapshot to name -#}
    {%- set leaves = modules.re.findall('\\+- (\\w+)', analyzed) -%}
    {%- set unnamed = leaves | select('in', ['Relation', 'HiveTableRelation', 'LogicalRDD', 'InMemoryRelation',
        'StreamingRelation', 'StreamingRelationV2', 'ExternalRDD']) | unique | list -%}
    {%- set clock = modules.re.findall('\\b(current_date|current_timestamp|now|localtimestamp|unix_timestamp|'
        ~ 'current_timezone)\\(', analyzed) | unique | list -%}
    {{ return({'iceberg': iceberg, 'unnamed': unnamed, 'clock': clock}) }}
{% endmacro %}

{#- {tag, repeat, stale}: the tag this run's write records (none where its inputs cannot be named), whether the table
    already holds this run (`repeat`), and the older lakeplan_applied tags the new one replaces. -#}
{% macro lakeplan_partial_update_applied(write_groups, spec, existing, creates) %}
    {%- set none_applied = {'tag': none, 'repeat': false, 'stale': []} -%}
    {%- if not lakeplan.lakeplan_counted_columns(spec) -%}{{ return(none_applied) }}{%- endif -%}
    {%- set inputs = lakeplan.lakeplan_partial_update_inputs(write_groups) -%}
    {%- if inputs.unnamed or inputs.clock or not inputs.iceberg -%}
        {{ return(none_applied) }}
    {%- endif -%}
    {%- set heads, snapshots = [], [] -%}
    {%- for name in inputs.iceberg -%}
        {%- do heads.append('select ' ~ lakeplan.lakeplan_string_literal(name) ~ ', snapshot_id from ' ~ name
            ~ ".refs where name = 'main'") -%}
    {%- endfor -%}
    {%- for row in run_query(heads | join(' union all ')).rows -%}
        {%- do snapshots.append(row[0] ~ '@' ~ row[1]) -%}
    {%- endfor -%}
    {%- set queries = [] -%}
    {%- for write_group in write_groups -%}
        {%- for member in write_group.members -%}{%- do queries.append(member.query) -%}{%- endfor -%}
    {%- endfor -%}
    {%- set logic = (model.config.get('lakeplan_fingerprint') or {}).get('rerun_logic') -%}
    {%- set tag = 'lakeplan_applied_' ~ local_md5(tojson([logic, queries, snapshots | sort]))[:16] -%}
    {%- set applied = {'tag': tag, 'repeat': false, 'stale': []} -%}
    {%- if existing is not none and not existing.is_view -%}
        {%- set relation = existing | string -%}
        {%- for row in run_query('select r.name, h.is_current_ancestor from ' ~ relation ~ '.refs as r left join '
            ~ relation ~ ".history as h on r.snapshot_id = h.snapshot_id where r.name like 'lakeplan_applied_%'").rows -%}
            {%- if row[0] == tag and row[1] and not creates -%}
                {%- do applied.update({'repeat': true}) -%}
            {%- elif row[0] != tag -%}
                {%- do applied.stale.append(row[0]) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(applied) }}
{% endmacro %}

{#- The statements that record what the write applied, once it has committed: its tag on the snapshot it committed
    (macros/utils/write_records.sql names it), and no older one. -#}
{% macro lakeplan_partial_update_applied_sql(target, applied) %}
    {%- if applied.tag is none -%}{{ return([]) }}{%- endif -%}
    {%- set statements = ['alter table ' ~ target ~ ' create or replace tag ' ~ applied.tag ~ ' as of version '
        ~ lakeplan.lakeplan_written_snapshot_marker()] -%}
    {%- for stale in applied.stale -%}
        {%- do statements.append('alter table ' ~ target ~ ' drop tag if exists ' ~ stale) -%}
    {%- endfor -%}
    {{ return(statements) }}
{% endmacro %}

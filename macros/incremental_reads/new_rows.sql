{#- Reading only what is new (issue 30): `{{ lakeplan.new_rows(ref('orders')) }}` in a partial-update member, or in an
    `upsert`, stands for the rows the Iceberg table `relation` gained since the write of the table that consumes it
    (the member's target, or the upsert itself) last committed. The snapshot of `relation` each write read is
    recorded on the consuming table (property `lakeplan.consumed`), so the rows are applied exactly once: a failed
    write records nothing and its rerun reads the same rows again. Every row is read on the first write and under
    --full-refresh. Between the two snapshots Iceberg's incremental scan gives the rows appended; where other writes
    added rows, its changelog (`create_changelog_view`) does (or, for a table with delete files, which that
    changelog refuses, the difference of the snapshots). A snapshot that changed or removed rows (a delete, an
    update, a MERGE that matched rows), or a consumed snapshot expired from the input's history or left behind by a
    rollback or a rebuild of the input, has no such reading: a target with a column whose rule counts the same rows
    twice (`sum`, `count`, ...) then stops with the fix; an upsert or another target reads the input whole, which
    gives the same rows (the log says so). The SQL it renders starts with a comment naming the input
    and both snapshots, which the write reads back to record what it consumed. -#}
{% macro new_rows(relation) %}
    {{ return(lakeplan.lakeplan_read_since_consumed(relation, none)) }}
{% endmacro %}

{#- `{{ lakeplan.changed_keys(ref('orders'), 'customer_key') }}`: the distinct values of `key` in the rows `relation`
    gained, changed or lost since the consuming table's last committed write (as a subquery, for `key in ...`), so
    that a member that aggregates recomputes only those keys: `where customer_key in {{ ... }}` in its query over
    the whole input. Its rows are those of a member that recomputes every key, for rules where the last value wins
    (`last_non_null`, a sequence group), not for a `sum`. Recorded and read again on failure as new_rows is; Iceberg's
    changelog gives the keys of deleted and updated rows too, so only an expired snapshot makes it read every key. -#}
{% macro changed_keys(relation, key) %}
    {{ return(lakeplan.lakeplan_read_since_consumed(relation, key)) }}
{% endmacro %}

{#- new_rows (`key` none) or changed_keys (the column `key`) of `relation`. -#}
{% macro lakeplan_read_since_consumed(relation, key) %}
    {%- set keys_of = 'select distinct ' ~ lakeplan.lakeplan_quote(key) ~ ' from ' if key else none -%}
    {#- under --empty dbt renders `relation` as a query of no rows, which has no snapshots: nothing is new, and the
        write records nothing consumed, so the next run reads everything -#}
    {%- if not execute or lakeplan.lakeplan_empty_run() -%}
        {{ return('(' ~ keys_of ~ relation ~ ')' if key else relation) }}
    {%- endif -%}
    {%- set input = load_relation(relation) -%}
    {#- dbt's cache knows the format of a table it listed, not of one this run created (an upstream model) -#}
    {%- set iceberg = input is not none and (input.is_iceberg if input.is_iceberg is not none else not input.is_view
        and lakeplan.lakeplan_read_table_properties(relation).get('format', '').startswith('iceberg/')) -%}
    {%- set read = '`' ~ model.name ~ '` reads ' ~ ('changed_keys' if key else 'new_rows') ~ '(' ~ relation ~ '), ' -%}
    {%- if input is none -%}
        {%- do exceptions.raise_compiler_error(read ~ 'which does not exist. Nothing was written. Fix: create it (or '
            ~ 'build the model that writes it) first, or correct the name.') -%}
    {%- elif not iceberg -%}
        {%- do exceptions.raise_compiler_error(read ~ 'which is ' ~ ('a view' if input.is_view
            else 'not an Iceberg table') ~ ': only Iceberg\'s snapshots tell what is new. Nothing was written. Fix: '
            ~ 'read an Iceberg table, or read ' ~ relation ~ ' whole.') -%}
    {%- endif -%}
    {#- the names alone, from an empty result: a plain query, not dbt's adapter macro that describes the table -#}
    {%- set columns = run_query('select * from ' ~ relation ~ ' limit 0').column_names | list if key else none -%}
    {%- if key and key | lower not in columns | map('lower') | list -%}
        {%- do exceptions.raise_compiler_error('`' ~ model.name ~ "` reads changed_keys(" ~ relation ~ ", '" ~ key
            ~ "'), but " ~ relation ~ ' has no column `' ~ key ~ '`. Nothing was written. Fix: name one of its columns '
            ~ 'as the key: ' ~ columns | join(', ') ~ '.') -%}
    {%- endif -%}
    {#- one read of the input's snapshots gives where it is now and what led there -#}
    {%- set since = lakeplan.lakeplan_input_lineage(relation) -%}
    {%- set current = since[-1].id if since else none -%}
    {%- set consumer = lakeplan.lakeplan_consumer() -%}
    {%- if consumer is not none and not consumer.is_view and not flags.FULL_REFRESH
        and lakeplan.lakeplan_writes_onto_consumed_base() -%}
        {%- do lakeplan.lakeplan_note_consumed_base(consumer) -%}
    {%- endif -%}
    {%- set consumed = none if flags.FULL_REFRESH or consumer is none
        else lakeplan.lakeplan_consumed(consumer).get(relation | string) -%}
    {%- set lineage = since | map(attribute='id') | list -%}
    {#- after only compactions and writes that matched nothing (lakeplan_lineage's `changes_rows`), nothing is new -#}
    {%- set since_consumed = since[lineage.index(consumed) + 1:] if consumed in lineage else none -%}
    {%- if since_consumed is not none and since_consumed | selectattr('changes_rows') | list == [] -%}
        {%- set consumed = current -%}
    {%- endif -%}
    {%- set marker = '/* lakeplan new_rows: ' ~ relation ~ ' at ' ~ current ~ ' after ' ~ consumed ~ ' */ ' -%}
    {%- set whole = marker ~ '(' ~ (keys_of or 'select * from ') ~ relation ~ ')' -%}
    {%- if current is none or consumed == current -%}
        {{ return(marker ~ '(' ~ (keys_of or 'select * from ') ~ relation ~ ' where false)') }}
    {%- elif consumed is none -%}
        {#- a table that exists yet records nothing of this input consumed may hold rows read from it before (a member
            that read it whole): the write decides (lakeplan_check_whole_reads) -#}
        {{ return((lakeplan.lakeplan_whole_read_marker(key, relation, 'unrecorded', '`' ~ consumer.identifier
            ~ '` records no snapshot of it consumed') if consumer is not none and not consumer.is_view
            and not flags.FULL_REFRESH else '') ~ whole) }}
    {%- endif -%}
    {%- set changed = [] -%}
    {%- set expired = since_consumed is none -%}  {#- or no longer in the lineage: see `kind` below -#}
    {%- if not expired and not key -%}
        {#- changed_keys reads deletes and updates from the changelog too; new_rows only added rows (of an append, or
            of an `overwrite` that removed none: a MERGE that only inserted) -#}
        {%- for snapshot in since_consumed if snapshot.removes_rows -%}
            {%- do changed.append(snapshot.operation ~ ' ' ~ snapshot.id) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- if expired or changed -%}
        {%- set table = consumer.identifier -%}
        {#- not in a lineage that goes back to the table's first snapshot, or still a snapshot of the table but newer
            than where an expiry cut the lineage short: not expired but left behind by a new history (a CREATE OR
            REPLACE, a rollback) -#}
        {%- set left_behind = expired and (since[0].parent is none or true in run_query(
            'select consumed.committed_at > oldest.committed_at from ' ~ relation ~ '.snapshots as consumed, '
            ~ relation ~ '.snapshots as oldest where consumed.snapshot_id = ' ~ consumed
            ~ ' and oldest.snapshot_id = ' ~ since[0].id).columns[0].values()) -%}
        {%- set kind = 'changed' if not expired else 'replaced' if left_behind else 'expired' -%}
        {%- set cause = {
            'expired': 'snapshot ' ~ consumed ~ ' of it, which the last write of `' ~ table
                ~ '` consumed, or one after it, has expired',
            'replaced': 'snapshot ' ~ consumed ~ ' of it, which the last write of `' ~ table ~ '` consumed, is not in '
                ~ 'its history any more: ' ~ lakeplan.lakeplan_replaced_by(relation),
            'changed': 'snapshots since the last write of `' ~ table ~ '` changed or removed rows ('
                ~ changed | join(', ') ~ ')'}[kind] -%}
        {#- the marker tells the write why the input is read whole (lakeplan_new_rows_read_whole): a target whose
            rule counts rows again stops if a member that reads new_rows writes such a column; else the write logs it -#}
        {{ return(lakeplan.lakeplan_whole_read_marker(key, relation, kind, cause) ~ whole) }}
    {%- endif -%}
    {%- set view = 'lakeplan_new_rows_' ~ local_md5(relation ~ '@' ~ consumed ~ '..' ~ current)[:12] -%}
    {%- if since_consumed | selectattr('changes_rows') | rejectattr('operation', 'equalto', 'append') | list == [] -%}
        {#- appends alone (besides compactions and writes that changed no row): Iceberg's incremental scan reads the
            files they added as they are. Its changelog would also shuffle and sort every new row by all its columns
            to drop rows a rewrite carried over, which appends do not have (docs/benchmarks.md, section 8). -#}
        {%- do run_query('create or replace temporary view ' ~ view ~ ' using iceberg options (path '
            ~ lakeplan.lakeplan_string_literal(relation | string) ~ ", 'start-snapshot-id' '" ~ consumed
            ~ "', 'end-snapshot-id' '" ~ current ~ "')") -%}
        {{ return(marker ~ '(' ~ (keys_of or 'select * from ') ~ view ~ ')') }}
    {%- endif -%}
    {%- set columns = columns or run_query('select * from ' ~ relation ~ ' limit 0').column_names | list -%}
    {%- if since[-1].delete_files > 0 -%}
        {#- Iceberg's changelog refuses a table with delete files (merge-on-read writes): the rows of the current
            snapshot that the consumed one lacks are the appended ones; both ways round, every changed row -#}
        {%- do log('lakeplan: `' ~ model.name ~ '` reads ' ~ relation ~ ' as the difference of its snapshots '
            ~ consumed ~ ' and ' ~ current ~ ': the table holds delete files, which Iceberg\'s changelog cannot read, so both '
            ~ 'snapshots are read whole.', info=true) -%}
        {%- set listed = lakeplan.lakeplan_quote_list(columns) -%}
        {%- set now, before = 'select ' ~ listed ~ ' from ' ~ relation ~ ' version as of ' ~ current,
            'select ' ~ listed ~ ' from ' ~ relation ~ ' version as of ' ~ consumed -%}
        {%- if key -%}
            {{ return(marker ~ '(' ~ keys_of ~ '((' ~ now ~ ' except all ' ~ before ~ ') union all (' ~ before
                ~ ' except all ' ~ now ~ ')))') }}
        {%- endif -%}
        {{ return(marker ~ '(' ~ now ~ ' except all ' ~ before ~ ')') }}
    {%- endif -%}
    {%- do run_query('call system.create_changelog_view(table => ' ~ lakeplan.lakeplan_string_literal(relation | string)
        ~ ", options => map('start-snapshot-id', '" ~ consumed ~ "', 'end-snapshot-id', '" ~ current ~ "'), "
        ~ "changelog_view => '" ~ view ~ "')") -%}
    {%- if key -%}{{ return(marker ~ '(' ~ keys_of ~ view ~ ')') }}{%- endif -%}
    {{ return(marker ~ '(select ' ~ lakeplan.lakeplan_quote_list(columns) ~ ' from ' ~ view
        ~ " where _change_type = 'INSERT')") }}
{% endmacro %}

{#- Why the table `relation` has a new history, by what writes it: a seed `dbt seed` loaded again (its CSV or config
    changed, or --full-refresh: lakeplan keeps an unchanged seed's table, spark__reset_csv_table), a model materialized
    as table (every run of it creates the table again), another model (a --full-refresh of it), or, where this project
    does not write it, a replace or a rollback. -#}
{% macro lakeplan_replaced_by(relation) %}
    {%- set name = lakeplan.lakeplan_relation_name(relation) -%}
    {%- for node in graph.nodes.values() if node.relation_name and lakeplan.lakeplan_relation_name(node.relation_name)
        == name and node.resource_type in ['seed', 'model'] -%}
        {%- if node.resource_type == 'seed' -%}
            {{ return('it is the seed `' ~ node.name ~ '`, which `dbt seed` loaded again (its CSV or its config '
                ~ 'changed, or --full-refresh)') }}
        {%- elif lakeplan.lakeplan_plan(node).kind.table and not lakeplan.lakeplan_plan(node).kind.stateful -%}
            {{ return('it is the model `' ~ node.name ~ '`, materialized as table, which every run of it creates '
                ~ 'again') }}
        {%- endif -%}
        {{ return('it was replaced (a --full-refresh of `' ~ node.name ~ '`, which writes it) or rolled back') }}
    {%- endfor -%}
    {{ return('it was replaced (by whatever writes it: this project does not) or rolled back') }}
{% endmacro %}

{#- The table that consumes what the model being compiled reads: a member's target, or the model itself; none while
    it does not exist. -#}
{% macro lakeplan_consumer() %}
    {%- set target = lakeplan.lakeplan_plan().get('member_of') -%}
    {%- if target -%}
        {{ return(adapter.get_relation(database=target.schema, schema=target.schema, identifier=target.identifier)) }}
    {%- endif -%}
    {{ return(load_relation(this)) }}
{% endmacro %}

{#- What `relation`'s last committed write consumed, {input: snapshot id}. A write records what it is about to
    consume as `lakeplan.consumed.pending` with the table's snapshot before it (`base`), and moves it to
    `lakeplan.consumed` after its commit; if it was stopped in between, the table's history tells: the write
    committed when a snapshot that is not a compaction follows `base` in the current lineage. -#}
{% macro lakeplan_consumed(relation, properties=none) %}
    {%- set properties = lakeplan.lakeplan_table_properties(relation) if properties is none else properties -%}
    {%- set consumed = fromjson(properties.get('lakeplan.consumed', '{}')) -%}
    {%- set pending = fromjson(properties.get('lakeplan.consumed.pending', 'null')) -%}
    {%- if pending and lakeplan.lakeplan_committed_after(relation, pending.base) -%}
        {%- do consumed.update(pending.inputs) -%}
    {%- endif -%}
    {{ return(consumed) }}
{% endmacro %}

{#- `relation`'s table properties, {key: value}, as this dbt invocation first read them: a write's readers before its
    first statement (each member's new_rows, the record of what the write consumed, its change_mode) share one
    `show tblproperties`. A write's own ALTERs run after its last read, and its maintenance reads the table itself. -#}
{% macro lakeplan_table_properties(relation) %}
    {%- set read = lakeplan.lakeplan_invocation_cache('lakeplan_table_properties') -%}
    {%- if relation | string not in read -%}
        {%- do read.update({relation | string: lakeplan.lakeplan_read_table_properties(relation)}) -%}
    {%- endif -%}
    {{ return(read[relation | string]) }}
{% endmacro %}

{#- Notes the snapshot the main of `relation` (a partial-update target, an Iceberg table) is at, before this
    invocation first reads its record of what was consumed (first: a commit in between makes it older than the
    record, which only stops this run's write, never doubles it); none where that record had been read already. -#}
{% macro lakeplan_note_consumed_base(relation) %}
    {%- set bases = lakeplan.lakeplan_invocation_cache('lakeplan_consumed_base') -%}
    {%- if lakeplan.lakeplan_relation_name(relation) not in bases -%}
        {%- set unread = relation | string not in lakeplan.lakeplan_invocation_cache('lakeplan_table_properties') -%}
        {%- do bases.update({lakeplan.lakeplan_relation_name(relation):
            lakeplan.lakeplan_head_snapshot(relation) if unread else none}) -%}
    {%- endif -%}
{% endmacro %}

{#- The snapshot lakeplan_note_consumed_base noted for `relation` in this invocation, or none. A write that applies
    what its inputs added since that record must commit onto it (lakeplan_unmoved_check): onto a later one, another
    run's commit has applied those rows already. -#}
{% macro lakeplan_consumed_base(relation) %}
    {%- set bases = lakeplan.lakeplan_invocation_cache('lakeplan_consumed_base') -%}
    {{ return(bases.get(lakeplan.lakeplan_relation_name(relation))) }}
{% endmacro %}

{#- Whether the write of the model being compiled applies what it reads with new_rows onto the snapshot its table was
    at when its consumed record was read (lakeplan_write_base): a partial-update target's (its members read; plan.sql)
    and an upsert's. Each sets its consumed record to what it read, so a write that another run's commit had overtaken
    would set that record back and, in an upsert without `sequence_by`, write older values over newer ones. -#}
{% macro lakeplan_writes_onto_consumed_base() %}
    {%- set plan = lakeplan.lakeplan_plan() -%}
    {{ return(true if plan.get('member_of') or plan.kind.changelog else false) }}
{% endmacro %}

{#- The snapshot a write into the existing `relation` that applies what `read` (lakeplan_new_rows_read) found commits
    onto (lakeplan_unmoved_check): none where it `creates` the table or reads nothing with new_rows. -#}
{% macro lakeplan_write_base(relation, read, creates) %}
    {{ return(lakeplan.lakeplan_consumed_base(relation) if read.inputs and not creates else none) }}
{% endmacro %}

{#- The rows of `source` (a query in parentheses or a view) a write sends under the condition `unmoved`
    (lakeplan_unmoved_check; none: `source` as it is). -#}
{% macro lakeplan_unmoved_rows(source, unmoved) %}
    {{ return('(select * from ' ~ source ~ ' as lakeplan_unmoved where ' ~ unmoved ~ ')' if unmoved else source) }}
{% endmacro %}

{#- A condition for the rows a write sends into `relation`: true while its main is still at `base`, else the write
    stops with the words concurrency.py tells as another run's commit; none without a base. Spark resolves the
    written table before this subquery, so a commit between the two stops the write instead of passing. -#}
{% macro lakeplan_unmoved_check(relation, base) %}
    {%- if base is none -%}{{ return(none) }}{%- endif -%}
    {{ return('case when (select snapshot_id from ' ~ relation ~ ".refs where name = 'main') = " ~ base
        ~ " then true else raise_error('lakeplan: " ~ relation ~ ' changed after this run read its inputs (at snapshot '
        ~ base ~ ")') end") }}
{% endmacro %}

{#- Before snapshot expiry: a pending record of what a write consumed (a write stopped between its commit and its
    record) names the snapshot it started from, which expiry may remove, and without it the record could not tell
    whether the write committed. Settled first, from the table's properties as they are now: the consumed
    snapshots if that write committed, else the record as it was. -#}
{% macro lakeplan_settle_consumed(relation) %}
    {%- set properties = lakeplan.lakeplan_read_table_properties(relation) -%}
    {%- if 'lakeplan.consumed.pending' not in properties -%}{{ return(none) }}{%- endif -%}
    {%- do run_query('alter table ' ~ relation ~ ' set tblproperties (' ~ lakeplan.lakeplan_properties_sql(
        {'lakeplan.consumed': tojson(lakeplan.lakeplan_consumed(relation, properties))}) ~ ')') -%}
    {%- do run_query('alter table ' ~ relation ~ " unset tblproperties if exists ('lakeplan.consumed.pending')") -%}
{% endmacro %}

{#- Whether a write (not a compaction) committed to `relation` after its snapshot `base` (none: no snapshot yet). -#}
{% macro lakeplan_committed_after(relation, base) %}
    {%- set lineage = lakeplan.lakeplan_lineage(relation) -%}
    {%- set ids = lineage | map(attribute='id') | list -%}
    {%- if base is not none and base not in ids -%}{{ return(false) }}{%- endif -%}
    {%- set after = lineage[ids.index(base) + 1:] if base is not none else lineage -%}
    {{ return(after | rejectattr('operation', 'equalto', 'replace') | list | length > 0) }}
{% endmacro %}

{#- The snapshot `relation`'s branch `ref` (main unless named) is at, or none before its first write. -#}
{% macro lakeplan_head_snapshot(relation, ref='main') %}
    {%- set head = run_query('select snapshot_id from ' ~ relation ~ '.refs where name = '
        ~ lakeplan.lakeplan_string_literal(ref)).rows -%}
    {{ return(head[0][0] | int if head else none) }}
{% endmacro %}

{#- The snapshots of `relation`'s current lineage, oldest first: [{id, operation, delete_files, changes_rows,
    removes_rows}], the last the one its main branch is at ([] before its first write); `delete_files`: how many the
    table held at that snapshot; `changes_rows`: whether it added or removed a row; `removes_rows`: whether it removed
    (or rewrote) one. A compaction (`replace`) only moves rows between files, and Iceberg commits an empty `overwrite`
    for a MERGE that matched nothing. -#}
{% macro lakeplan_lineage(relation) %}
    {{ return(lakeplan.lakeplan_lineages([relation])[lakeplan.lakeplan_relation_name(relation)]) }}
{% endmacro %}

{#- lakeplan_lineage of each of `relations`, {lakeplan_relation_name: lineage}, in one query: each table's snapshots
    with the head of its `main`, whose parents, followed back, are the lineage. -#}
{% macro lakeplan_lineages(relations) %}
    {#- Iceberg's summary leaves out a count that is 0; one without totals (another writer's) may have changed rows -#}
    {%- set counted = "(summary['total-records'] is null or exists(array(%s), counted -> "
        ~ "cast(coalesce(summary[counted], '0') as bigint) > 0))" -%}
    {%- set removes = "'deleted-records', 'added-position-deletes', 'added-equality-deletes', 'added-dvs'" -%}
    {%- set snapshots, heads, queries = {}, {}, [] -%}
    {%- for relation in relations -%}
        {%- set name = lakeplan.lakeplan_relation_name(relation) -%}
        {%- do snapshots.update({name: {}}) -%}
        {%- do queries.append('select ' ~ lakeplan.lakeplan_string_literal(name)
            ~ ", snapshot_id, parent_id, operation, coalesce(summary['total-delete-files'], '0'), "
            ~ '(select snapshot_id from ' ~ relation ~ ".refs where name = 'main'), operation != 'replace' and "
            ~ counted | format("'added-records', " ~ removes) ~ ", operation not in ('append', 'replace') and "
            ~ counted | format(removes) ~ ' from ' ~ relation ~ '.snapshots') -%}
    {%- endfor -%}
    {%- for row in run_query(queries | join('\nunion all\n')).rows -%}
        {%- do snapshots[row[0]].update({row[1] | int: {'id': row[1] | int, 'parent': none if row[2] is none
            else row[2] | int, 'operation': row[3], 'delete_files': row[4] | int, 'changes_rows': row[6],
            'removes_rows': row[7]}}) -%}
        {%- if row[0] not in heads and row[5] is not none -%}
            {%- do heads.update({row[0]: row[5] | int}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set lineages = {} -%}
    {%- for name, by_id in snapshots.items() -%}
        {%- set chain = [heads[name]] if name in heads else [] -%}
        {#- a parent expired from the table's history ends the lineage -#}
        {%- for step in by_id if chain and chain[-1] in by_id -%}
            {%- do chain.append(by_id[chain[-1]].parent) -%}
        {%- endfor -%}
        {%- set lineage = [] -%}
        {%- for id in chain | reverse if id in by_id -%}
            {%- do lineage.append(by_id[id]) -%}
        {%- endfor -%}
        {%- do lineages.update({name: lineage}) -%}
    {%- endfor -%}
    {{ return(lineages) }}
{% endmacro %}

{#- lakeplan_lineage of `relation`, an input the model being compiled reads with new_rows or changed_keys. The first
    such read of a write reads the lineages of every Iceberg table the write reads (a target's through its members) in
    one query: ten members that read an input each asked ten queries before. Each is handed out once, to its own
    read; a table the first read did not know as Iceberg is read alone. -#}
{% macro lakeplan_input_lineage(relation) %}
    {%- set plan = lakeplan.lakeplan_plan() -%}
    {%- set writer = plan.member_of.target if plan.get('member_of') else model.name -%}
    {%- set read = lakeplan.lakeplan_invocation_cache('lakeplan_input_lineages') -%}
    {%- if writer not in read -%}
        {%- set node = (graph.nodes.values() | selectattr('name', 'equalto', writer)
            | selectattr('resource_type', 'equalto', 'model') | first) if plan.get('member_of') else model -%}
        {%- set inputs = [] -%}
        {%- for unique_id in lakeplan.lakeplan_plan(node).reads -%}
            {%- set read_node = graph.nodes.get(unique_id) or graph.sources.get(unique_id) -%}
            {%- set input = adapter.get_relation(database=read_node.database, schema=read_node.schema,
                identifier=read_node.identifier or read_node.alias) if read_node else none -%}
            {%- if input is not none and input.is_iceberg -%}{%- do inputs.append(input) -%}{%- endif -%}
        {%- endfor -%}
        {%- do read.update({writer: lakeplan.lakeplan_lineages(inputs) if inputs else {}}) -%}
    {%- endif -%}
    {%- set name = lakeplan.lakeplan_relation_name(relation) -%}
    {{ return(read[writer].pop(name) if name in read[writer] else lakeplan.lakeplan_lineage(relation)) }}
{% endmacro %}

{#- The inputs a model's (or member's) SQL `text` reads whole with new_rows or changed_keys, from the comments
    lakeplan_read_since_consumed puts there: [(`new_rows` or `changed_keys`, input, `expired`, `replaced`, `changed` or
    `unrecorded`, why)]. -#}
{% macro lakeplan_new_rows_read_whole(text) %}
    {{ return(modules.re.findall('/\\* lakeplan (new_rows|changed_keys) reads all of (\\S+) \\((\\w+)\\): (.*?) \\*/',
        text)) }}
{% endmacro %}

{#- The comment that lakeplan_new_rows_read_whole reads: why `relation` is read whole (`kind`, `cause`). -#}
{% macro lakeplan_whole_read_marker(key, relation, kind, cause) %}
    {{ return('/* lakeplan ' ~ ('changed_keys' if key else 'new_rows') ~ ' reads all of ' ~ relation ~ ' (' ~ kind
        ~ '): ' ~ cause ~ ' */ ') }}
{% endmacro %}

{#- Logs each input the SQL `text` of `name` reads whole, and why: once its write goes on. -#}
{% macro lakeplan_log_whole_reads(name, text) %}
    {%- for reader, relation, kind, cause in lakeplan.lakeplan_new_rows_read_whole(text) -%}
        {%- do log('lakeplan: `' ~ name ~ '` reads all of ' ~ relation ~ ': ' ~ ('its ' if kind == 'changed' else '')
            ~ cause ~ ', which only a whole reading follows.', info=true) -%}
    {%- endfor -%}
{% endmacro %}

{#- What the model being written consumes, {input: snapshot id}, read from the comments new_rows put in its SQL (its
    own and its members'); `nothing_new`: a write would change nothing, for every table the model reads is read with
    new_rows or changed_keys and has no snapshot its last write did not consume; `quiet`: none it reads with those has,
    but it also reads a table whole, which records nothing: its write changes nothing only if it sends no row
    (lakeplan_sends_no_rows), as a join of no new rows with that table does, and a union with it does not. -#}
{% macro lakeplan_new_rows_read() %}
    {%- set read, unchanged, fresh = {}, [], [] -%}
    {%- for input, current, consumed in modules.re.findall('/\\* lakeplan new_rows: (\\S+) at (\\S+) after (\\S+) \\*/',
        lakeplan.lakeplan_compiled_sql()) if current != 'None' -%}
        {%- do read.update({input: current | int}) -%}
        {%- do (unchanged if current == consumed else fresh).append(lakeplan.lakeplan_relation_name(input)) -%}
    {%- endfor -%}
    {#- only a model that reads with new_rows has a plan to ask (a snapshot, a seed have none) -#}
    {%- set tables = lakeplan.lakeplan_tables_read(model) if read else [] -%}
    {{ return({'inputs': read, 'nothing_new': tables | length > 0 and tables | reject('in', unchanged) | list == [],
        'quiet': read | length > 0 and fresh == []}) }}
{% endmacro %}

{#- Whether the query `sql` returns no row (it stops at the first). -#}
{% macro lakeplan_sends_no_rows(sql) %}
    {{ return(run_query('select 1 from (' ~ sql ~ ') as lakeplan_rows limit 1').rows | length == 0) }}
{% endmacro %}

{#- The log line of a write skipped because `read` (lakeplan_new_rows_read) found nothing new; `reader`: what read
    it (`its members read`, `its query reads`). -#}
{% macro lakeplan_log_nothing_new(read, reader, info=true) %}
    {%- do log('lakeplan: `' ~ model.name ~ '`: ' ~ reader ~ ' nothing new since its last write ('
        ~ read.inputs | dictsort | map('join', ' at ') | join(', ') ~ '), so nothing was written.', info=info) -%}
{% endmacro %}

{#- The SQL the model being compiled reads: its own and that of the ephemeral models (members) it wraps. -#}
{% macro lakeplan_compiled_sql() %}
    {{ return(([compiled_code or ''] + (model.extra_ctes or []) | map(attribute='sql') | list) | join('\n')) }}
{% endmacro %}

{#- The tables and views `node` reads (its plan's `reads`: its refs and sources, through the models it inlines), each
    as lakeplan_relation_name gives it. -#}
{% macro lakeplan_tables_read(node) %}
    {%- set tables = [] -%}
    {%- for unique_id in lakeplan.lakeplan_plan(node).reads -%}
        {%- set read = graph.nodes.get(unique_id) or graph.sources.get(unique_id) -%}
        {%- do tables.append(lakeplan.lakeplan_relation_name(read.relation_name if read else unique_id)) -%}
    {%- endfor -%}
    {{ return(tables) }}
{% endmacro %}

{#- `relation` (a relation or its name) as `schema.identifier`, unquoted and in lower case, to compare names. -#}
{% macro lakeplan_relation_name(relation) %}
    {{ return((relation | string).replace('`', '') | lower) }}
{% endmacro %}

{#- The statements around a write into the existing `relation` that record what it consumed: one before it (pending,
    with the table's snapshot now) and one after its commit. -#}
{% macro lakeplan_consumed_sql(relation, read) %}
    {%- if not read.inputs -%}{{ return({'before': [], 'after': []}) }}{%- endif -%}
    {#- `run`: a run whose write another run's commit beat removes its own pending record (spark_adapter.py), so the
        inputs it did not write are never counted as consumed -#}
    {%- set pending = {'base': lakeplan.lakeplan_head_snapshot(relation), 'inputs': read.inputs,
        'run': invocation_id} -%}
    {%- set resolved = lakeplan.lakeplan_consumed(relation) -%}
    {%- set consumed = dict(resolved) -%}
    {%- do consumed.update(read.inputs) -%}
    {#- the record resolved from an earlier pending one is kept as this write replaces it; else the record is left
        alone: it was read when this run began, and a run that committed and recorded since (which beats this one)
        would be set back to it, its rows read and counted again by the next run -#}
    {%- set recorded = fromjson(lakeplan.lakeplan_table_properties(relation).get('lakeplan.consumed', '{}')) -%}
    {%- set before = {'lakeplan.consumed': tojson(resolved)} if resolved != recorded else {} -%}
    {%- do before.update({'lakeplan.consumed.pending': tojson(pending)}) -%}
    {{ return({
        'before': ['alter table ' ~ relation ~ ' set tblproperties (' ~ lakeplan.lakeplan_properties_sql(before) ~ ')'],
        'after': ['alter table ' ~ relation ~ ' set tblproperties (' ~ lakeplan.lakeplan_properties_sql(
            {'lakeplan.consumed': tojson(consumed)}) ~ ')',
            'alter table ' ~ relation ~ " unset tblproperties if exists ('lakeplan.consumed.pending')"]}) }}
{% endmacro %}

{#- The property a table created by this write records what it consumed with (in the same CREATE). -#}
{% macro lakeplan_consumed_properties() %}
    {%- set read = lakeplan.lakeplan_new_rows_read() -%}
    {{ return({'lakeplan.consumed': tojson(read.inputs)} if read.inputs else {}) }}
{% endmacro %}

{#- Everything one write group needs, from the real member schemas: each member's temp view (its query
    with the CTEs it reads), its columns, and what it writes; checked on the way. Its statements name the members
    whose `write_options` they carry (`options_origin`). -#}
{% macro lakeplan_partial_update_write_group(group, spec) %}
    {%- set options_origin = lakeplan.lakeplan_write_options_origin(group) -%}
    {%- set members = [] -%}
    {%- set sequence_families = [] -%}
    {%- for member in group.members -%}
        {%- set view = lakeplan.lakeplan_temp_view('member_' ~ member.name) -%}
        {%- set ctes = lakeplan.lakeplan_member_ctes(member.unique_id) -%}
        {%- set with_clause = 'with ' ~ ctes | join(',\n') ~ '\n' if ctes else '' -%}
        {%- set query = with_clause ~ 'select * from ' ~ ref(member.name) -%}
        {%- call statement('stage_member_' ~ member.name) -%}
            {{ lakeplan.lakeplan_statement_options(group.write_options, options_origin) }}
            -- stage member `{{ member.name }}` of `{{ spec.model }}`
            create or replace temporary view {{ view }} as {{ query }}
        {%- endcall -%}
        {%- set columns = adapter.get_columns_in_relation(view) -%}
        {%- do lakeplan.lakeplan_validate_partial_update_member(member, columns, spec) -%}
        {#- the op column is never data; the sequence column is written where the target has it -#}
        {%- set target_columns = spec.columns | map(attribute='name') | map('lower') | list -%}
        {%- set written, types = [], {} -%}
        {%- for column in columns -%}{%- do types.update({column.name | lower: column.dtype}) -%}{%- endfor -%}
        {%- for column in columns if column.name | lower in target_columns
            and column.name | lower != (member.op_column or '') | lower -%}
            {%- do written.append(column.name) -%}
        {%- endfor -%}
        {%- set family = lakeplan.lakeplan_type_family(types[member.sequence_by | lower])
            if member.sequence_by else none -%}
        {%- if family and family not in sequence_families -%}{%- do sequence_families.append(family) -%}{%- endif -%}
        {%- do members.append({'config': member, 'view': view, 'query': query, 'ctes': ctes, 'written': written,
            'types': types, 'sequence_family': family}) -%}
    {%- endfor -%}
    {%- set written = [] -%}
    {%- for member in members -%}{%- do written.extend(member.written | map('lower')) -%}{%- endfor -%}
    {{ return({
        'group': group,
        'options_origin': options_origin,
        'members': members,
        'written': written | unique | list,
        'changelog': group.members | selectattr('op_column') | list | length > 0,
        'sequence_families': sequence_families,
    }) }}
{% endmacro %}

{#- Every group's write, as one change of the target: readers see the table as it was until the last group has
    written, and as it was (or no table) when a group fails (a rerun then applies each group once). One group is
    one statement and one commit. Several groups write a copy and the copy becomes the target in one commit: into
    an existing table, an Iceberg branch of it that `main` then fast-forwards to; when the write creates the
    table, a staging table that one CREATE OR REPLACE TABLE AS SELECT copies. `prepared`: the target's
    lakeplan_partial_update_prepare. Returns the statements in the order they run, [{name, sql}]: a named one runs
    as dbt's `statement(name)` (`main`, the commit, is the one dbt keeps), the others are DDL without a result; a
    `main` that writes nothing says what dbt shows instead of `OK` (`unwritten`). Only this run's
    tombstones are written here, before the statements that read them; `record=false` (`dbt compile`) writes
    nothing. A run the table already holds (lakeplan_partial_update_applied) sends no write; the others record what
    they applied right after their commit. -#}
{% macro lakeplan_partial_update_steps(prepared, record=true) %}
    {%- set target, write_groups = prepared.relation, prepared.write_groups -%}
    {%- set spec, creates = prepared.spec, prepared.creates -%}
    {%- set delta_mode = lakeplan.lakeplan_plan().change_mode.mode == 'delta' -%}
    {#- the table's shape as the YAML declares it, first: also on a run that writes no rows (a repeat, nothing new),
        so that the shape a reader of ref() meets is always this run's (its change_mode's views, widened types) -#}
    {%- set stored_names = adapter.get_columns_in_relation(target) | map(attribute='name') | list
        if not creates else [] -%}
    {%- set steps = [] -%}
    {%- for statement in ([] if creates else lakeplan.lakeplan_partial_update_shape_sql(target, spec, stored_names)) -%}
        {%- do steps.append({'name': none, 'sql': statement}) -%}
    {%- endfor -%}
    {%- if record and prepared.applied.repeat -%}
        {{ return(steps + [{'name': 'main', 'sql': '-- ' ~ target ~ ' already holds this run (tag '
            ~ prepared.applied.tag ~ '): not written\nselect 0 as lakeplan_rows', 'unwritten': 'ALREADY APPLIED'}]) }}
    {%- endif -%}
    {%- set read = lakeplan.lakeplan_new_rows_read() -%}
    {%- set views = write_groups | map(attribute='members') | sum(start=[]) | map(attribute='view') | list -%}
    {#- `dbt compile` shows the same skip: what `dbt run` would send now -#}
    {%- if not creates and (read.nothing_new
        or read.quiet and lakeplan.lakeplan_sends_no_rows('select 1 from ' ~ views | join(' union all select 1 from '))) -%}
        {%- do lakeplan.lakeplan_log_nothing_new(read, 'its members read', info=record) -%}
        {{ return(steps + [{'name': 'main', 'sql': '-- ' ~ target ~ ': nothing new to write\nselect 0 as lakeplan_rows',
            'unwritten': 'NOTHING NEW'}]) }}
    {%- endif -%}
    {%- set writes = record and lakeplan.lakeplan_writes(prepared.existing) -%}
    {%- set tombstones = lakeplan.lakeplan_partial_update_tombstones(target, write_groups, spec,
        lakeplan.lakeplan_forgets_deletes(creates, prepared.existing), writes) -%}
    {%- do spec.update({'tombstones': tombstones}) -%}
    {%- if record and not writes -%}
        {#- --empty: each group's rows are collapsed and counted (zero), the table is not written -#}
        {%- set counts = [] -%}
        {%- for write_group in write_groups -%}
            {%- do counts.append('select 1 from (' ~ lakeplan.lakeplan_partial_update_collapse_sql(
                write_group, spec, lakeplan.lakeplan_partial_update_layout(write_group, spec)) ~ ')') -%}
        {%- endfor -%}
        {{ return([{'name': 'main', 'sql': lakeplan.lakeplan_empty_run_sql(counts | join('\nunion all\n')),
            'unwritten': 'NOT WRITTEN (--empty)'}]) }}
    {%- endif -%}
    {%- set before = [] -%}
    {%- if not creates -%}
        {%- set reads = [] -%}
        {%- for write_group in write_groups -%}
            {%- for member in write_group.members -%}
                {%- do reads.append('select 1 from ' ~ member.view) -%}
            {%- endfor -%}
        {%- endfor -%}
        {%- set change = lakeplan.lakeplan_change_mode(target, reads | join(' union all ')) -%}
        {%- if change.sql -%}{%- do before.append(change.sql) -%}{%- endif -%}
        {%- if record -%}{%- do lakeplan.lakeplan_log_change_mode(change) -%}{%- endif -%}
        {%- do spec.update({'change_mode': change.mode}) -%}
    {%- endif -%}
    {%- set after = [] -%}
    {%- set commit = lakeplan.lakeplan_commit_marker(target) -%}
    {#- what the members read with new_rows is applied onto the snapshot its consumed record was read at -#}
    {%- set base = lakeplan.lakeplan_write_base(target, read, creates) -%}
    {%- do spec.update({'unmoved': lakeplan.lakeplan_unmoved_check(target, base)}) -%}
    {%- if delta_mode and not creates -%}
        {%- set writes = [lakeplan.lakeplan_delta_write(target, write_groups, spec, commit, stored_names)] -%}
    {%- elif write_groups | length == 1 -%}
        {%- set writes = [{'name': 'main', 'sql': lakeplan.lakeplan_partial_update_write_sql(
            target, write_groups[0], spec, creates, commit ~ lakeplan.lakeplan_partial_update_group_label(write_groups, 0, spec))}] -%}
    {%- else -%}
        {#- the copy the groups write is this run's own (dbt's invocation id): two overlapping runs of the target
            never share one; a run whose statement fails removes its own (spark_adapter, concurrency.py) -#}
        {%- set run = (invocation_id | replace('-', ''))[:12] -%}
        {%- set staging = target.incorporate(path={'identifier': target.identifier ~ '__lakeplan_staging_' ~ run}) -%}
        {%- set branch = 'lakeplan_write_' ~ run -%}
        {%- set drop_branch = 'alter table ' ~ target ~ ' drop branch if exists ' ~ branch -%}
        {%- set writes = [] -%}
        {%- for write_group in write_groups -%}
            {%- set label = lakeplan.lakeplan_partial_update_group_label(write_groups, loop.index0, spec) -%}
            {%- do writes.append({'name': 'write_group_' ~ loop.index, 'sql':
                lakeplan.lakeplan_partial_update_write_sql(staging, write_group, spec, loop.first, label, staging=true)
                if creates else lakeplan.lakeplan_partial_update_write_sql(
                    target, write_group, spec, false, label, into=target ~ '.branch_' ~ branch)}) -%}
        {%- endfor -%}
        {%- if creates -%}
            {%- do writes.append({'name': 'main',
                'sql': commit ~ lakeplan.lakeplan_partial_update_create_sql(target, 'select * from ' ~ staging)}) -%}
            {%- do after.extend(['drop table ' ~ staging ~ ' purge'] + ([drop_branch] if load_relation(target) else [])) -%}
        {%- else -%}
            {#- from `base`: main's fast-forward then fails once another run committed after it -#}
            {%- do before.append('alter table ' ~ target ~ ' create or replace branch ' ~ branch
                ~ (' as of version ' ~ base if base is not none else '')) -%}
            {%- do writes.append({'name': 'main', 'branch': branch, 'sql': commit ~ 'call system.fast_forward('
                ~ lakeplan.lakeplan_string_literal(target | string) ~ ", 'main', '" ~ branch ~ "')"}) -%}
            {%- do after.append(drop_branch) -%}
        {%- endif -%}
    {%- endif -%}
    {%- set consumed = lakeplan.lakeplan_consumed_sql(target, read) if not creates
        else {'before': [], 'after': []} -%}
    {%- do before.extend(consumed.before) -%}
    {%- set after = consumed.after + lakeplan.lakeplan_partial_update_applied_sql(target, prepared.applied) + after -%}
    {%- for statement in before -%}{%- do steps.append({'name': none, 'sql': statement}) -%}{%- endfor -%}
    {%- do steps.extend(writes) -%}
    {%- if creates -%}
        {#- a new table holds no delta rows; its row lineage orders the runs to come. Rebuilt in another change_mode, it
            keeps no view of the delta layout (they would read columns it no longer has). -#}
        {%- set views = ["alter table " ~ target ~ " set tblproperties ('format-version' = '3')"]
            + lakeplan.lakeplan_delta_views_sql(target, spec) if delta_mode
            else lakeplan.lakeplan_drop_delta_views_sql(target, kept_only=true) -%}
        {%- for statement in views -%}{%- do steps.append({'name': none, 'sql': statement}) -%}{%- endfor -%}
    {%- endif -%}
    {%- for statement in after -%}
        {%- do steps.append({'name': none, 'sql': statement, 'records': target}) -%}
    {%- endfor -%}
    {{ return(steps) }}
{% endmacro %}

{#- What makes a kept table the shape its YAML declares, as changes of metadata, not of rows (`stored_names`: its
    columns' names): the columns the YAML newly declares (a new member's), which stay (NULL) if the write then fails;
    in change_mode delta the delta's columns and its views, made before the append (a view failing after it would
    report a committed run as failed); leaving change_mode delta, their removal, refused while delta rows wait. -#}
{% macro lakeplan_partial_update_shape_sql(target, spec, stored_names) %}
    {%- set present = stored_names | map('lower') | list -%}
    {%- set statements, additions = [], [] -%}
    {%- for column in spec.columns if column.name | lower not in present -%}
        {%- do additions.append(lakeplan.lakeplan_quote(column.name) ~ ' ' ~ column.data_type) -%}
    {%- endfor -%}
    {%- if additions -%}
        {%- do statements.append('alter table ' ~ target ~ ' add columns (' ~ additions | join(', ') ~ ')') -%}
    {%- endif -%}
    {%- if lakeplan.lakeplan_plan().change_mode.mode == 'delta' -%}
        {%- do statements.extend(lakeplan.lakeplan_delta_table_sql(target, spec, stored_names)) -%}
        {%- do statements.extend(lakeplan.lakeplan_delta_views_sql(target, spec)) -%}
    {%- elif 'lakeplan_delta' in present -%}
        {%- do lakeplan.lakeplan_refuse_unfolded_delta(target, spec) -%}
        {%- do statements.extend(lakeplan.lakeplan_leave_delta_sql(target, spec, stored_names)) -%}
    {%- endif -%}
    {{ return(statements) }}
{% endmacro %}

{#- The comment line naming the write group a statement writes, after its settings header: for a reader of
    target/run/ and of `dbt compile`, and for an error Spark raises about the members' query
    (plugins/dbt_lakeplan/spark_adapter.py reads it: `-- write group <i> of <n> of `<target>`: `<member>`, …`). -#}
{% macro lakeplan_partial_update_group_label(write_groups, index, spec) %}
    {%- set names = [] -%}
    {%- for member in write_groups[index].members -%}
        {%- do names.append('`' ~ member.config.name ~ '`') -%}
    {%- endfor -%}
    {{ return('-- write group ' ~ (index + 1) ~ ' of ' ~ write_groups | length ~ ' of `' ~ spec.model ~ '`: '
        ~ names | join(', ') ~ '\n') }}
{% endmacro %}

{#- The statements as one script: what target/run/ keeps and `dbt compile` shows. -#}
{% macro lakeplan_partial_update_script(steps) %}
    {%- set statements = [] -%}
    {%- for step in steps -%}
        {#- a checked delta write: its bounded append, or its check and then the append (lakeplan_delta_write) -#}
        {%- do statements.extend([step.guarded] if step.guarded else [step.check, step.sql] if step.check
            else [step.sql]) -%}
    {%- endfor -%}
    {{ return(statements | map('trim') | join(';\n\n')) }}
{% endmacro %}

{#- Runs lakeplan_partial_update_steps in order; a failure stops the rest. The steps recording a write that landed
    (`records`: its table) run together, last (macros/utils/write_records.sql). -#}
{% macro lakeplan_run_steps(steps) %}
    {%- set records = steps | selectattr('records') | list -%}
    {%- set written = {'start': none, 'branch': none} -%}
    {%- for step in steps | rejectattr('records') -%}
        {%- do written.update(lakeplan.lakeplan_written_where(step, records)) -%}
        {%- if step.unwritten -%}
            {%- do lakeplan.lakeplan_main_without_write(step.sql, step.unwritten) -%}
        {%- elif step.branch -%}
            {#- main's fast-forward: sent again while another run's metadata-only commit meets it -#}
            {%- set result = adapter.lakeplan_fast_forward(step.sql) -%}
            {%- do store_result('main', response=result[0], agate_table=result[1]) -%}
        {%- elif step.check -%}
            {#- a delta write that a `sum` could overflow once folded (delta.sql, lakeplan_delta_write) -#}
            {%- set result = adapter.lakeplan_checked_write(step.sql, step.check, step.guarded, step.bound_crossed) -%}
            {%- do store_result('main', response=result[0], agate_table=result[1]) -%}
        {%- elif step.name -%}
            {%- call statement(step.name) -%}{{ step.sql }}{%- endcall -%}
        {%- else -%}
            {#- a branch or columns of the table, before the write: sent again while other runs' commits meet it -#}
            {%- do adapter.lakeplan_commit_metadata(step.sql) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if records -%}
        {%- set ran = lakeplan.lakeplan_record_after_write(records[0].records, records | map(attribute='sql')
            | list, written.start, written.branch) -%}
        {%- for step in records -%}{%- do step.update({'sql': ran[loop.index0]}) -%}{%- endfor -%}
    {%- endif -%}
{% endmacro %}

{#- One group's write: one MERGE (or INSERT OVERWRITE) under the group's `write_options`, then `label` (the line
    naming its group). It reads the collapsed rows as a subquery, not through a temp view of them: Spark keeps a temp view as SQL text
    and analyses it again in the MERGE, which at 100+ columns costs seconds. `creates`: the table is created by
    this write (first run, --full-refresh), in one atomic CREATE TABLE AS SELECT, so a write that fails leaves no
    table, or the table as it was; a `staging` table is created without the target's location and properties.
    `into`: where the rows go when not `target` itself (a branch of it). -#}
{% macro lakeplan_partial_update_write_sql(target, write_group, spec, creates, label, staging=false, into=none) %}
    {%- set layout = lakeplan.lakeplan_partial_update_layout(write_group, spec) -%}
    {%- set source = lakeplan.lakeplan_partial_update_source(write_group, spec, layout) -%}
    {%- if into is none and not creates -%}
        {%- set source = lakeplan.lakeplan_unmoved_rows(source, spec.get('unmoved')) -%}
    {%- endif -%}
    {%- set merges = not creates and write_group.group.write_mode != 'overwrite' -%}
    {%- set options = lakeplan.lakeplan_merge_session_options(target, write_group.group.write_options, staging,
        spec.get('change_mode')) if merges
        else write_group.group.write_options -%}
    {%- set write_sql -%}
        {{ lakeplan.lakeplan_statement_options(options, write_group.options_origin) }}
        {{- label }}
        {%- if creates -%}
            {{ lakeplan.lakeplan_partial_update_create_sql(target, lakeplan.lakeplan_partial_update_created_rows(source, write_group, spec), staging) }}
        {%- elif merges -%}
            {{ lakeplan.lakeplan_partial_update_merge_sql(into or target, source, write_group, spec) }}
        {%- else -%}
            {{ lakeplan.lakeplan_partial_update_overwrite_sql(into or target, source, write_group, spec) }}
        {%- endif -%}
    {%- endset -%}
    {{ return(write_sql) }}
{% endmacro %}

{#- The target table with its declared columns and types, holding `rows` (a query of every column in the
    declared order): one atomic CREATE TABLE AS SELECT. A `staging` copy has the table's format and partitions,
    but not its location, properties or comment. -#}
{% macro lakeplan_partial_update_create_sql(relation, rows, staging=false) %}
    {%- set created = relation %}
    create or replace table {{ created }}
    {{ file_format_clause() }}
    {{ partition_cols(label="partitioned by") }}
    {% if not staging -%}
        {{ tblproperties_clause() }}
        {{ location_clause() }}
        {{ comment_clause() }}
    {%- endif %}
    as {{ rows }}
{% endmacro %}

{#- The rows a group's first write creates the table with: every declared column, in order, typed; the group's
    collapsed values, a static partition's value, NULL for the columns the group does not write. -#}
{% macro lakeplan_partial_update_created_rows(source, write_group, spec) %}
    {%- set static = {} -%}
    {%- for name, value in write_group.group.static_partition.items() -%}
        {%- do static.update({name | lower: value}) -%}
    {%- endfor -%}
    {%- set projections = [] -%}
    {%- for column in spec.columns -%}
        {%- set name = column.name | lower -%}
        {%- set sequence = spec.grouped.get(name) -%}
        {%- if name in static -%}
            {%- set value = lakeplan.lakeplan_checked_cast(lakeplan.lakeplan_string_literal(static[name]), 'string', column.data_type,
                'static_partition of `' ~ spec.model ~ '` gives column `' ~ column.name ~ '` the value',
                'give it a value of the column\'s type.') -%}
        {%- elif sequence is none or sequence in write_group.written -%}
            {%- set value = 'cast(lakeplan_change.' ~ lakeplan.lakeplan_quote(column.name) ~ ' as ' ~ column.data_type ~ ')' -%}
        {%- else -%}
            {%- set value = 'cast(null as ' ~ column.data_type ~ ')' -%}
        {%- endif -%}
        {%- do projections.append(value ~ ' as ' ~ lakeplan.lakeplan_quote(column.name)) -%}
    {%- endfor -%}
    {%- if lakeplan.lakeplan_plan().change_mode.mode == 'delta' -%}
        {%- do projections.extend(lakeplan.lakeplan_delta_stored_values(spec)) -%}
    {%- endif -%}
    {{ return('select ' ~ projections | join(', ') ~ '\nfrom ' ~ source ~ ' as lakeplan_change where lakeplan_alive') }}
{% endmacro %}

{#- Whose `write_options` a group's statements carry, for an error about one of them; none without any (a
    statement may still carry lakeplan's own settings, which are not the members'). -#}
{% macro lakeplan_write_options_origin(group) %}
    {%- if not group.write_options -%}{{ return(none) }}{%- endif -%}
    {%- set names = [] -%}
    {%- for member in group.members -%}{%- do names.append('`' ~ member.name ~ '`') -%}{%- endfor -%}
    {{ return('the write_options of ' ~ names | join(', ')) }}
{% endmacro %}

{#- Under `remove_record`, this run's deletes of sequenced changelog members are recorded as tombstones before any
    group writes (macros/tombstones/); the relation of the side table, or none. `record=false` only counts them.
    Those members share one sequence (the planner refuses two), each delete keeps its member's own value of it: the
    members' types are widened by the UNION, never cast to another member's. -#}
{% macro lakeplan_partial_update_tombstones(relation, write_groups, spec, creates, record=true) %}
    {%- set deletes, deleting = [], [] -%}
    {%- set keys, present = [], [] -%}
    {%- for column in spec.columns if column.name | lower in spec.unique_key | map('lower') | list -%}
        {%- set name = lakeplan.lakeplan_quote(column.name) -%}
        {%- do keys.append('cast(' ~ name ~ ' as ' ~ column.data_type ~ ') as ' ~ name) -%}
        {%- do present.append(lakeplan.lakeplan_quote(column.name) ~ ' is not null') -%}
    {%- endfor -%}
    {%- for write_group in write_groups if spec.on_delete == 'remove_record' -%}
        {%- for member in write_group.members if member.config.op_column and member.config.sequence_by -%}
            {%- set sequence = lakeplan.lakeplan_quote(member.config.sequence_by) -%}
            {%- do deleting.append('`' ~ member.config.name ~ '`') -%}
            {%- do deletes.append('select ' ~ keys | join(', ') ~ ', ' ~ sequence
                ~ ' as lakeplan_sequence from ' ~ member.view ~ ' where '
                ~ lakeplan.lakeplan_quote(member.config.op_column) ~ " = '-D' and " ~ present | join(' and ')) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- if not deletes -%}{{ return(none) }}{%- endif -%}
    {#- the line naming the members whose deletes these are, for an error their SQL raises (spark_adapter.py) -#}
    {%- set label = '\n-- deletes of `' ~ spec.model ~ '`: ' ~ deleting | join(', ') ~ '\n' -%}
    {{ return(lakeplan.lakeplan_write_tombstones(
        relation, label ~ deletes | join('\nunion all\n'), spec.unique_key, creates, record)) }}
{% endmacro %}

{#- Of the CTEs dbt compiled into this target (every member and the ephemeral models they read), those one
    member's query reads: its own and, transitively, those of the ephemeral models it refs. Spark keeps a temp
    view as SQL text and analyses every CTE in it wherever the view is read, so carrying all members' CTEs in
    each view multiplies that work by the member count. -#}
{% macro lakeplan_member_ctes(member_id) %}
    {%- set needed = [member_id] -%}
    {#- dbt lists a CTE after those it reads: walking back, each needed CTE is met before what it reads -#}
    {%- for cte in model.extra_ctes | reverse -%}
        {%- if cte.id in needed -%}{%- do needed.extend(graph.nodes[cte.id].depends_on.nodes) -%}{%- endif -%}
    {%- endfor -%}
    {{ return(model.extra_ctes | selectattr('id', 'in', needed) | map(attribute='sql') | list) }}
{% endmacro %}

{#- A table's upkeep, as its model's `maintenance` settings say (docs/maintenance.md): compaction of small data
    files and of deletes, snapshot expiry, and orphan-file removal, each an Iceberg procedure and its own commit,
    run only when its threshold is crossed. lakeplan's state in the table is kept: tagged and branch snapshots
    survive expiry, `lakeplan_applied_*` tags move to the compacted snapshot (which holds the same rows), table
    properties (recorded fingerprints) are not touched, and side tables (tombstones, staging) are other tables. -#}

{#- After an `upsert`'s or a partial-update target's write (their materializations call it): the model's maintenance,
    when it has some with `after_write`. Nothing under `--empty`, which writes nothing. -#}
{% macro lakeplan_maintain_after_write() %}
    {%- set settings = lakeplan.lakeplan_plan().maintenance -%}
    {%- if settings and settings.after_write and not lakeplan.lakeplan_empty_run() -%}
        {%- set failed = lakeplan.lakeplan_maintain_table(this.incorporate(type='table'), model.name, settings,
            orphans=false) -%}
        {#- the write has committed: a failed procedure is the upkeep's, not the write's, and the run goes on -#}
        {%- if failed -%}
            {%- do exceptions.warn('lakeplan maintenance of `' ~ model.name ~ '` failed after its write committed (the '
                ~ 'rows are written; only the upkeep stopped): ' ~ failed ~ ' Fix: correct the cause, then run `dbt '
                ~ "run-operation lakeplan_maintain --args '{select: " ~ model.name ~ "}'`; or set `maintenance: "
                ~ '{after_write: false}` and schedule that.') -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}

{#- The post-hook that runs an incremental model's maintenance after dbt-spark's incremental write:
    `+post-hook: "{{ lakeplan.lakeplan_maintenance_hook() }}"`. lakeplan's own materializations maintain their tables
    themselves, so on them it does nothing. Renders no SQL. -#}
{% macro lakeplan_maintenance_hook() %}
    {%- set kind = lakeplan.lakeplan_plan().kind if execute and model.resource_type == 'model' else {} -%}
    {%- if kind.stateful and not kind.merged -%}
        {%- do lakeplan.lakeplan_maintain_after_write() -%}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}

{#- `dbt run-operation lakeplan_maintain --args '{select: [orders_current, customer_360]}'`: the maintenance of
    each selected model (a name or a list of names) whose thresholds are crossed (a target in change_mode delta: its
    delta rows folded first, at `delta_runs` runs), and orphan-file removal, for teams that schedule it apart from
    their runs. Every name must be a model with `maintenance` settings. -#}
{% macro lakeplan_maintain(select=none) %}
    {%- set names = [] if select is none else [select] if select is string else select | list -%}
    {%- set models = {} -%}
    {%- for node in graph.nodes.values() if node.resource_type == 'model' -%}
        {%- do models.update({node.name: node}) -%}
    {%- endfor -%}
    {%- set maintained = [] -%}
    {%- for model_name, node in models | dictsort if lakeplan.lakeplan_plan(node).maintenance -%}
        {%- do maintained.append(model_name) -%}
    {%- endfor -%}
    {%- set choices = ': ' ~ maintained | join(', ') if maintained else ' (none has it yet)' -%}
    {#- every problem at once, one line each: a scheduled job that names two wrong models is fixed in one go -#}
    {%- set problems = [] -%}
    {%- if not names -%}
        {%- do problems.append('lakeplan_maintain: select names no model, so nothing would be maintained. Fix: name '
            ~ "them, as in `dbt run-operation lakeplan_maintain --args '{select: [a, b]}'`; models with `maintenance`"
            ~ choices ~ '.') -%}
    {%- endif -%}
    {%- for name in names -%}
        {%- if name not in models -%}
            {%- do problems.append('lakeplan_maintain: select names `' ~ name ~ '`, but this project has no enabled '
                ~ 'model of that name. Fix: select models with `maintenance` by name' ~ choices ~ '.') -%}
        {%- elif not lakeplan.lakeplan_plan(models[name]).maintenance -%}
            {%- do problems.append('lakeplan_maintain: model `' ~ name ~ '` has no `maintenance` settings, so '
                ~ 'lakeplan does not know its thresholds. Fix: add `maintenance: {}` (the defaults) to its config, or '
                ~ 'leave it out of select (models with `maintenance`' ~ choices ~ ').') -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if problems -%}
        {%- do exceptions.raise_compiler_error(problems | join('\n')) -%}
    {%- endif -%}
    {%- set failures = [] -%}
    {%- for name in names -%}
        {%- set node = models[name] -%}
        {%- set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
        {%- if relation is none -%}
            {%- do log('lakeplan maintenance of `' ~ name ~ '`: its table ' ~ node.schema ~ '.' ~ node.alias
                ~ ' does not exist yet; nothing to do.', info=true) -%}
        {%- else -%}
            {%- set change_mode = lakeplan.lakeplan_plan(node).change_mode -%}
            {%- set failed = (lakeplan.lakeplan_delta_fold(relation, node) if change_mode
                and change_mode.mode == 'delta' and lakeplan.lakeplan_in_delta_layout(relation) else none)
                or lakeplan.lakeplan_maintain_table(relation, name, lakeplan.lakeplan_plan(node).maintenance,
                orphans=true) -%}
            {%- if failed -%}{%- do failures.append('lakeplan_maintain: maintenance of `' ~ name ~ '` failed: '
                ~ failed ~ ' Fix: correct the cause and run it again; the other models selected were maintained.')
                -%}{%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if failures -%}
        {%- do exceptions.raise_compiler_error(failures | join('\n')) -%}
    {%- endif -%}
{% endmacro %}

{#- One table's maintenance pass: what is due (lakeplan_maintenance_state), then each due action in order:
    compaction, expiry (after moving the applied tags to the current snapshot), orphans (`orphans`: under
    lakeplan_maintain only, as it lists the table's directory). One log line per action, with the procedure's
    figures, apart from the write's; what is not due is said at debug level after a write. A procedure that fails
    ends the pass: returns its sentence (none when all went through), for the caller to report. -#}
{% macro lakeplan_maintain_table(relation, name, settings, orphans) %}
    {%- set readers = lakeplan.lakeplan_consumed_by_readers(relation, settings.read_by) -%}
    {%- set state = lakeplan.lakeplan_maintenance_state(relation, settings, readers.values() | list) -%}
    {%- set said = 'lakeplan maintenance of `' ~ name ~ '`: ' -%}
    {%- set failures = [] -%}
    {#- each threshold with what it is measured on, for the log lines -#}
    {%- set figures = {'small_files': state.small_files ~ ' small data files (threshold ' ~ settings.small_files ~ ')',
        'deleted': lakeplan.lakeplan_percent(state.deleted_share) ~ ' of rows deleted (threshold '
            ~ lakeplan.lakeplan_percent(settings.deleted_share) ~ ')',
        'delete_files': state.delete_files ~ ' delete files (threshold ' ~ settings.delete_files ~ ')'} -%}
    {%- set compacted = lakeplan.lakeplan_maintenance_compact(relation, state, settings, said, figures, failures) -%}
    {%- if state.expirable and not failures -%}
        {%- do lakeplan.lakeplan_move_applied_tags(relation) -%}
        {%- do lakeplan.lakeplan_settle_consumed(relation) -%}
        {%- do lakeplan.lakeplan_maintenance_expire(relation, state, settings, said, readers, failures) -%}
    {%- endif -%}
    {#- under change_mode delta the fold compacts, not a threshold here -#}
    {%- set idle = ([] if compacted or not settings.compacts else ['compaction: ' ~ [figures.small_files,
        figures.deleted, figures.delete_files] | join(', ')]) + ([] if state.expirable else
        ['snapshot expiry: none older than ' ~ state.expire_before ~ ' beyond the last ' ~ settings.keep_snapshots]) -%}
    {%- if idle and not failures -%}
        {%- do log(said ~ 'no threshold crossed for ' ~ idle | join('; nor for ') ~ '.', info=orphans) -%}
    {%- endif -%}
    {%- if orphans and settings.orphans_after_hours is not none and not failures -%}
        {%- set location = run_query('describe table extended ' ~ relation).rows
            | selectattr('0', 'equalto', 'Location') | map(attribute='1') | first -%}
        {%- set removed = lakeplan.lakeplan_call_procedure('remove_orphan_files', relation, {'older_than': 'timestamp '
            ~ lakeplan.lakeplan_string_literal(state.orphans_before)}, failures, rows=true) -%}
        {%- if not failures -%}
            {%- do log(said ~ 'remove_orphan_files (files under ' ~ location ~ ' older than ' ~ state.orphans_before
                ~ ' that no snapshot references): ' ~ removed | length ~ ' orphan files removed.', info=true) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return(failures | first if failures else none) }}
{% endmacro %}

{#- Compaction, when due: `rewrite_data_files` (small data files; or the deleted share, then applying the deletes),
    then `rewrite_position_delete_files` (many delete files; or after data files were rewritten, which applies their
    deletes, whose delete files Iceberg keeps while the rewritten files carry their sequence number: it drops those
    that no live file needs). On a table with a map or array column Iceberg 1.10.2's rewrite_position_delete_files
    fails (apache/iceberg#14619), so there many delete files are compacted by applying them, `rewrite_data_files`
    rewriting each data file that has deletes, and the delete files no live file needs stay: the figures count
    only those a live file needs (lakeplan_live_deletes_sql), and reads skip the others by their file path bounds.
    `said`: the log lines' start; each names its procedure and the threshold that made it due (`figures`:
    lakeplan_maintain_table's). `failures`: where a failed procedure's sentence goes. Returns whether anything ran. -#}
{% macro lakeplan_maintenance_compact(relation, state, settings, said, figures, failures) %}
    {%- set positional = state.positional -%}
    {%- set by_share = state.deleted_share >= settings.deleted_share -%}
    {%- set many_deletes = state.delete_files >= settings.delete_files -%}
    {%- set applies_deletes = by_share or (many_deletes and not positional) -%}
    {%- set compacts_data = settings.compacts
        and (applies_deletes or state.small_files >= settings.small_files) -%}
    {%- set drops_applied = positional and (compacts_data and state.delete_files > 0 or state.dead_delete_files > 0) -%}
    {%- set compacts_deletes = drops_applied or (many_deletes and positional) -%}
    {%- set due = figures.deleted if by_share else figures.delete_files ~ ', applied: the table has a map or array '
        ~ 'column, on which rewrite_position_delete_files fails' if applies_deletes else figures.small_files -%}
    {%- if compacts_data -%}
        {%- set options = {'target-file-size-bytes': settings.target_file_bytes,
            'min-file-size-bytes': settings.small_file_bytes, 'min-input-files': 2} -%}
        {%- if applies_deletes -%}{%- do options.update({'delete-file-threshold': 1}) -%}{%- endif -%}
        {%- set result = lakeplan.lakeplan_call_procedure('rewrite_data_files', relation, {'options': options},
            failures) -%}
        {%- if failures -%}{{ return(true) }}{%- endif -%}
        {%- do log(said ~ 'rewrite_data_files (' ~ due ~ '): ' ~ result.rewritten_data_files_count
            ~ ' data files rewritten into ' ~ result.added_data_files_count ~ ', ' ~ result.rewritten_bytes_count
            ~ ' bytes rewritten.', info=true) -%}
    {%- endif -%}
    {%- if compacts_deletes -%}
        {%- set result = lakeplan.lakeplan_call_procedure('rewrite_position_delete_files', relation,
            {'options': {'rewrite-all': 'true'} if drops_applied else {'min-input-files': 2}}, failures) -%}
        {%- if failures -%}{{ return(true) }}{%- endif -%}
        {%- do log(said ~ 'rewrite_position_delete_files (' ~ ('after the deletes were applied, ' ~ due if compacts_data
            else state.dead_delete_files ~ ' delete files no live data file needs' if drops_applied
            else figures.delete_files) ~ '): ' ~ result.rewritten_delete_files_count
            ~ ' delete files rewritten into ' ~ result.added_delete_files_count ~ ', ' ~ result.rewritten_bytes_count
            ~ ' bytes rewritten.', info=true) -%}
    {%- endif -%}
    {{ return(compacts_data or compacts_deletes) }}
{% endmacro %}

{#- `expire_snapshots` older than the cutoff, keeping the last `keep_snapshots` (and, as Iceberg does, every snapshot a
    tag or branch names): how many went (counted around it: a compaction just before adds snapshots), and the files
    deleted with them. `readers`: lakeplan_consumed_by_readers, whose snapshots the cutoff spares. -#}
{% macro lakeplan_maintenance_expire(relation, state, settings, said, readers, failures) %}
    {%- set before = run_query('select count(*) from ' ~ relation ~ '.snapshots').rows[0][0] | int -%}
    {%- set result = lakeplan.lakeplan_call_procedure('expire_snapshots', relation, {'older_than': 'timestamp '
        ~ lakeplan.lakeplan_string_literal(state.expire_before), 'retain_last': settings.keep_snapshots}, failures) -%}
    {%- if failures -%}{{ return(none) }}{%- endif -%}
    {%- set left = run_query('select count(*) from ' ~ relation ~ '.snapshots').rows[0][0] | int -%}
    {%- do log(said ~ 'expire_snapshots (older than ' ~ state.expire_before ~ ', keeping the last '
        ~ settings.keep_snapshots ~ ' of the current history, every tagged or branch snapshot'
        ~ (' and those ' ~ readers | list | sort | join(', ') ~ ' last and since' if readers
        else '') ~ '): ' ~ (before - left)
        ~ ' snapshots expired (' ~ left ~ ' left), ' ~ result.deleted_data_files_count ~ ' data files, '
        ~ ((result.deleted_position_delete_files_count | int) + (result.deleted_equality_delete_files_count | int))
        ~ ' delete files and ' ~ result.deleted_manifest_files_count ~ ' manifests deleted.', info=true) -%}
{% endmacro %}

{#- What the thresholds are measured on, from the table's metadata tables (its current files, its snapshots and refs):
    small data files, the share of rows its delete files delete and how many there are (those a live data file needs:
    lakeplan_live_deletes_sql; `dead_delete_files`, the others), whether a snapshot may expire (older than the cutoff,
    beyond the last `keep_snapshots`, no ref on it), the cutoffs as timestamps, and `positional`: whether Iceberg's
    rewrite_position_delete_files works on the table (no map or array column, lakeplan_maintenance_compact). The
    expiry cutoff is no later than the oldest of the snapshots `kept` (ids its readers consumed last). A table that
    compaction does not rewrite (`compacts`: false, change_mode delta) has its files and deletes measured as none:
    their read, half a second at 1M keys, would be most of a delta run's upkeep for nothing. -#}
{% macro lakeplan_maintenance_state(relation, settings, kept) %}
    {%- set expire_hours = settings.expire_after_hours -%}
    {%- set by_age = 'current_timestamp() - make_dt_interval(0, ' ~ (expire_hours or 0) ~ ')' -%}
    {%- set cutoff = 'least(' ~ by_age ~ ', coalesce((select min(committed_at) from ' ~ relation ~ '.snapshots where '
        ~ 'snapshot_id in (' ~ kept | join(', ') ~ ')), ' ~ by_age ~ '))' if kept else by_age -%}
    {%- set files = ['(select count_if(file_size_in_bytes < ' ~ settings.small_file_bytes ~ ') from data_files)',
        '(select coalesce(sum(record_count), 0) from data_files)',
        '(select coalesce(sum(if(live, record_count, 0)), 0) from deletes)', '(select count_if(live) from deletes)',
        '(select count_if(not live) from deletes)'] if settings.compacts else ['0'] * 5 -%}
    {%- set measured -%}
        with data_files as (select file_size_in_bytes, record_count from {{ relation }}.data_files),
        deletes as ({{ lakeplan.lakeplan_live_deletes_sql(relation) }}),
        snapshots as (
            select snapshot_id, committed_at, row_number() over (order by committed_at desc) as newest
            from {{ relation }}.snapshots
        )
        select
            {{ files[:4] | join(',\n            ') }},
            {% if expire_hours is none %}0{% else %}(select count(*) from snapshots
                where newest > {{ settings.keep_snapshots }}
                and committed_at < {{ cutoff }}
                and snapshot_id not in (select snapshot_id from {{ relation }}.refs)){% endif %},
            cast({{ cutoff }} as string),
            cast(current_timestamp() - make_dt_interval(0, {{ settings.orphans_after_hours or 0 }}) as string),
            {{ files[4] }}
    {%- endset -%}
    {%- set row = run_query(measured).rows[0] -%}
    {%- set data_rows, deleted_rows = row[1] | int, row[2] | int -%}
    {%- set nested = [] -%}
    {#- which procedure compacts delete files matters only where there are some (a describe less after most writes) -#}
    {%- if row[3] | int > 0 or row[7] | int > 0 -%}
        {%- for column in adapter.get_columns_in_relation(relation)
            if modules.re.search('(map|array)<', column.dtype | lower) -%}
            {%- do nested.append(column.name) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return({'small_files': row[0] | int, 'deleted_share': (deleted_rows / data_rows) if data_rows else 0,
        'delete_files': row[3] | int, 'dead_delete_files': row[7] | int, 'expirable': row[4] | int > 0,
        'expire_before': row[5], 'orphans_before': row[6], 'positional': nested == []}) }}
{% endmacro %}

{#- A query of `relation`'s delete files (content, record_count, live): `live` unless the one data file it names (a
    deletion vector's referenced_data_file, or a position delete file whose file_path column's bounds are one path) is
    no longer in the table. A compaction that applies deletes leaves their delete files in the table while the
    rewritten files carry the old sequence number (Iceberg reads past them by those bounds): counted, they would skew
    maintenance's deleted share and `auto`'s row count (lakeplan_change_mode). 2147483546: the file_path column's
    field id in every position delete file. -#}
{% macro lakeplan_live_deletes_sql(relation) %}
    {%- set path = 'lower_bounds[2147483546]' -%}
    {{ return('select content, record_count, named is null or named in (select file_path from ' ~ relation
        ~ '.data_files) as live from (select content, record_count, coalesce(referenced_data_file, if(content = 1 '
        ~ 'and ' ~ path ~ ' = upper_bounds[2147483546], cast(' ~ path ~ ' as string), null)) as named from ' ~ relation
        ~ '.delete_files)') }}
{% endmacro %}

{#- `call system.<procedure>(table => ..., <argument> => <value>, ...)`: its one result row (`rows`: all its rows),
    or none with Spark's sentence naming the procedure added to `failures`. `arguments`: SQL values, or a dict (an
    options map). -#}
{% macro lakeplan_call_procedure(procedure, relation, arguments, failures, rows=false) %}
    {%- set named = ['table => ' ~ lakeplan.lakeplan_string_literal(relation | string)] -%}
    {%- for name, value in arguments.items() -%}
        {%- set pairs = [] -%}
        {%- for key, item in (value.items() if value is mapping else []) -%}
            {%- do pairs.append(lakeplan.lakeplan_string_literal(key) ~ ', '
                ~ lakeplan.lakeplan_string_literal(item)) -%}
        {%- endfor -%}
        {%- do named.append(name ~ ' => ' ~ ('map(' ~ pairs | join(', ') ~ ')' if value is mapping else value)) -%}
    {%- endfor -%}
    {%- set result = adapter.lakeplan_attempt('call system.' ~ procedure ~ '(' ~ named | join(', ') ~ ')') -%}
    {%- if result.error -%}
        {%- do failures.append(procedure ~ ' failed: ' ~ result.error.rstrip('.') ~ '.') -%}
        {{ return(none) }}
    {%- endif -%}
    {{ return(result.table.rows if rows else result.table.rows[0]) }}
{% endmacro %}

{#- Before expiry: a `lakeplan_applied_*` tag in the current history (what a partial-update target's write applied:
    macros/materializations/partial_update/applied.sql) moves to the current snapshot. Expiry keeps the tagged snapshot
    but removes the ones after it (compactions), which cuts it from the current history, and a rerun of the same
    inputs would then add its `sum` again. The snapshots since the tag hold the rows it applied, so a rerun is a
    repeat exactly when it was before. -#}
{% macro lakeplan_move_applied_tags(relation) %}
    {%- for row in run_query('select r.name from ' ~ relation ~ '.refs as r join ' ~ relation ~ '.history as h on '
        ~ "r.snapshot_id = h.snapshot_id where r.name like 'lakeplan_applied_%' and h.is_current_ancestor").rows -%}
        {%- do lakeplan.lakeplan_execute('alter table ' ~ relation ~ ' create or replace tag ' ~ row[0]) -%}
    {%- endfor -%}
{% endmacro %}

{#- 0.1234 -> `12.3%` -#}
{% macro lakeplan_percent(share) %}
    {{ return('%.1f%%' | format(share * 100)) }}
{% endmacro %}

{#- The snapshot of `relation` each model that reads it with new_rows / changed_keys (`read_by`: the plan's
    maintenance.read_by) consumed last, {'`model` read with macro': snapshot id}, from the record of the table it writes
    (a member's target's) as it is now. Expiry keeps these and every later snapshot, so a reader's next run reads what
    is new since, however soon after this table's maintenance it comes (in the same `dbt run`, often). A reader not
    built yet has consumed nothing. -#}
{% macro lakeplan_consumed_by_readers(relation, read_by) %}
    {%- set consumed = {} -%}
    {%- for reader in read_by -%}
        {%- set schema, identifier = reader.table.split('.') -%}
        {%- set table = adapter.get_relation(database=schema, schema=schema, identifier=identifier) -%}
        {%- set snapshot = none if table is none else lakeplan.lakeplan_consumed(table,
            lakeplan.lakeplan_read_table_properties(table)).get(relation | string) -%}
        {%- if snapshot is not none -%}
            {%- do consumed.update({'`' ~ reader.model ~ '` read with ' ~ reader.macro: snapshot}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(consumed) }}
{% endmacro %}

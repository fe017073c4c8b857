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
        {%- do lakeplan.lakeplan_maintain_table(this.incorporate(type='table'), model.name, settings, orphans=false) -%}
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
    each selected model (a name or a list of names) whose thresholds are crossed, and orphan-file removal, for teams
    that schedule it apart from their runs. Every name must be a model with `maintenance` settings. -#}
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
    {%- for name in names -%}
        {%- set node = models[name] -%}
        {%- set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
        {%- if relation is none -%}
            {%- do log('lakeplan maintenance of `' ~ name ~ '`: its table ' ~ node.schema ~ '.' ~ node.alias
                ~ ' does not exist yet; nothing to do.', info=true) -%}
        {%- else -%}
            {%- do lakeplan.lakeplan_maintain_table(relation, name, lakeplan.lakeplan_plan(node).maintenance,
                orphans=true) -%}
        {%- endif -%}
    {%- endfor -%}
{% endmacro %}

{#- One table's maintenance pass: what is due (lakeplan_maintenance_state), then each due action in order:
    compaction, expiry (after moving the applied tags to the current snapshot), orphans (`orphans`: under
    lakeplan_maintain only, as it lists the table's directory). One log line per action, with the procedure's
    figures, apart from the write's; what is not due is said at debug level after a write. -#}
{% macro lakeplan_maintain_table(relation, name, settings, orphans) %}
    {%- set readers = lakeplan.lakeplan_consumed_by_readers(relation, settings.read_by) -%}
    {%- set state = lakeplan.lakeplan_maintenance_state(relation, settings, readers.values() | list) -%}
    {%- set said = 'lakeplan maintenance of `' ~ name ~ '`: ' -%}
    {#- each threshold with what it is measured on, for the log lines -#}
    {%- set figures = {'small_files': state.small_files ~ ' small data files (threshold ' ~ settings.small_files ~ ')',
        'deleted': lakeplan.lakeplan_percent(state.deleted_share) ~ ' of rows deleted (threshold '
            ~ lakeplan.lakeplan_percent(settings.deleted_share) ~ ')',
        'delete_files': state.delete_files ~ ' delete files (threshold ' ~ settings.delete_files ~ ')'} -%}
    {%- set compacted = lakeplan.lakeplan_maintenance_compact(relation, state, settings, said, figures) -%}
    {%- if state.expirable -%}
        {%- do lakeplan.lakeplan_move_applied_tags(relation) -%}
        {%- do lakeplan.lakeplan_settle_consumed(relation) -%}
        {%- do lakeplan.lakeplan_maintenance_expire(relation, state, settings, said, readers) -%}
    {%- endif -%}
    {%- set idle = ([] if compacted else ['compaction: ' ~ [figures.small_files, figures.deleted, figures.delete_files]
        | join(', ')]) + ([] if state.expirable else
        ['snapshot expiry: none older than ' ~ state.expire_before ~ ' beyond the last ' ~ settings.keep_snapshots]) -%}
    {%- if idle -%}
        {%- do log(said ~ 'no threshold crossed for ' ~ idle | join('; nor for ') ~ '.', info=orphans) -%}
    {%- endif -%}
    {%- if orphans and settings.orphans_after_hours is not none -%}
        {%- set location = run_query('describe table extended ' ~ relation).rows
            | selectattr('0', 'equalto', 'Location') | map(attribute='1') | first -%}
        {%- set removed = run_query('call system.remove_orphan_files(table => '
            ~ lakeplan.lakeplan_string_literal(relation | string) ~ ', older_than => timestamp '
            ~ lakeplan.lakeplan_string_literal(state.orphans_before) ~ ')').rows -%}
        {%- do log(said ~ 'remove_orphan_files (files under ' ~ location ~ ' older than ' ~ state.orphans_before
            ~ ' that no snapshot references): ' ~ removed | length ~ ' orphan files removed.', info=true) -%}
    {%- endif -%}
{% endmacro %}

{#- Compaction, when due: `rewrite_data_files` (small data files; or the deleted share, then applying the deletes),
    then `rewrite_position_delete_files` (many delete files; or after data files were rewritten, which applies their
    deletes, whose delete files Iceberg keeps while the rewritten files carry their sequence number: it drops those
    that no live file needs, else they would count as deleted rows in every later figure). `said`: the
    log lines' start; each names its procedure and the threshold that made it due (`figures`: lakeplan_maintain_table's).
    Returns whether anything ran. -#}
{% macro lakeplan_maintenance_compact(relation, state, settings, said, figures) %}
    {%- set table = lakeplan.lakeplan_string_literal(relation | string) -%}
    {%- set applies_deletes = state.deleted_share >= settings.deleted_share -%}
    {%- set compacts_data = applies_deletes or state.small_files >= settings.small_files -%}
    {%- set drops_applied = compacts_data and state.delete_files > 0 -%}
    {%- set compacts_deletes = drops_applied or state.delete_files >= settings.delete_files -%}
    {%- if compacts_data -%}
        {%- set options = {'target-file-size-bytes': settings.target_file_bytes,
            'min-file-size-bytes': settings.small_file_bytes, 'min-input-files': 2} -%}
        {%- if applies_deletes -%}{%- do options.update({'delete-file-threshold': 1}) -%}{%- endif -%}
        {%- set result = lakeplan.lakeplan_call_procedure('rewrite_data_files', table, options) -%}
        {%- do log(said ~ 'rewrite_data_files (' ~ (figures.deleted if applies_deletes else figures.small_files) ~ '): '
            ~ result.rewritten_data_files_count
            ~ ' data files rewritten into ' ~ result.added_data_files_count ~ ', ' ~ result.rewritten_bytes_count
            ~ ' bytes rewritten.', info=true) -%}
    {%- endif -%}
    {%- if compacts_deletes -%}
        {%- set result = lakeplan.lakeplan_call_procedure('rewrite_position_delete_files', table,
            {'rewrite-all': 'true'} if drops_applied else {'min-input-files': 2}) -%}
        {%- do log(said ~ 'rewrite_position_delete_files (' ~ ('after the deletes were applied, ' ~ (figures.deleted
            if applies_deletes else figures.small_files) if drops_applied else figures.delete_files) ~ '): '
            ~ result.rewritten_delete_files_count
            ~ ' delete files rewritten into ' ~ result.added_delete_files_count ~ ', ' ~ result.rewritten_bytes_count
            ~ ' bytes rewritten.', info=true) -%}
    {%- endif -%}
    {{ return(compacts_data or compacts_deletes) }}
{% endmacro %}

{#- `expire_snapshots` older than the cutoff, keeping the last `keep_snapshots` (and, as Iceberg does, every snapshot a
    tag or branch names): how many went (counted around it: a compaction just before adds snapshots), and the files
    deleted with them. `readers`: lakeplan_consumed_by_readers, whose snapshots the cutoff spares. -#}
{% macro lakeplan_maintenance_expire(relation, state, settings, said, readers) %}
    {%- set before = run_query('select count(*) from ' ~ relation ~ '.snapshots').rows[0][0] | int -%}
    {%- set result = run_query('call system.expire_snapshots(table => '
        ~ lakeplan.lakeplan_string_literal(relation | string) ~ ', older_than => timestamp '
        ~ lakeplan.lakeplan_string_literal(state.expire_before) ~ ', retain_last => ' ~ settings.keep_snapshots
        ~ ')').rows[0] -%}
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
    small data files, the share of rows its delete files delete, delete files, whether a snapshot may expire (older
    than the cutoff, beyond the last `keep_snapshots`, no ref on it), and the cutoffs as timestamps. The expiry
    cutoff is no later than the oldest of the snapshots `kept` (ids its readers consumed last). -#}
{% macro lakeplan_maintenance_state(relation, settings, kept) %}
    {%- set expire_hours = settings.expire_after_hours -%}
    {%- set by_age = 'current_timestamp() - make_dt_interval(0, ' ~ (expire_hours or 0) ~ ')' -%}
    {%- set cutoff = 'least(' ~ by_age ~ ', coalesce((select min(committed_at) from ' ~ relation ~ '.snapshots where '
        ~ 'snapshot_id in (' ~ kept | join(', ') ~ ')), ' ~ by_age ~ '))' if kept else by_age -%}
    {%- set measured -%}
        with files as (select content, file_size_in_bytes, record_count from {{ relation }}.files),
        snapshots as (
            select snapshot_id, committed_at, row_number() over (order by committed_at desc) as newest
            from {{ relation }}.snapshots
        )
        select
            (select count_if(content = 0 and file_size_in_bytes < {{ settings.small_file_bytes }}) from files),
            (select coalesce(sum(if(content = 0, record_count, 0)), 0) from files),
            (select coalesce(sum(if(content != 0, record_count, 0)), 0) from files),
            (select count_if(content != 0) from files),
            {% if expire_hours is none %}0{% else %}(select count(*) from snapshots
                where newest > {{ settings.keep_snapshots }}
                and committed_at < {{ cutoff }}
                and snapshot_id not in (select snapshot_id from {{ relation }}.refs)){% endif %},
            cast({{ cutoff }} as string),
            cast(current_timestamp() - make_dt_interval(0, {{ settings.orphans_after_hours or 0 }}) as string)
    {%- endset -%}
    {%- set row = run_query(measured).rows[0] -%}
    {%- set data_rows, deleted_rows = row[1] | int, row[2] | int -%}
    {{ return({'small_files': row[0] | int, 'deleted_share': (deleted_rows / data_rows) if data_rows else 0,
        'delete_files': row[3] | int, 'expirable': row[4] | int > 0, 'expire_before': row[5], 'orphans_before': row[6]}) }}
{% endmacro %}

{#- `call system.<procedure>(table => ..., options => map(...))`: its one result row. -#}
{% macro lakeplan_call_procedure(procedure, table, options) %}
    {%- set pairs = [] -%}
    {%- for key, value in options.items() -%}
        {%- do pairs.append(lakeplan.lakeplan_string_literal(key) ~ ', ' ~ lakeplan.lakeplan_string_literal(value)) -%}
    {%- endfor -%}
    {{ return(run_query('call system.' ~ procedure ~ '(table => ' ~ table ~ ', options => map(' ~ pairs | join(', ')
        ~ '))').rows[0]) }}
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

{#- What lakeplan records of a write once it has landed (what it consumed, what it applied, its branch's removal):
    metadata commits after the data commit, each of which another run's commit to the table can meet. Iceberg
    retries a tag or branch change on the table's new metadata but keeps the metadata it was made on, so its retry
    fails ('Table metadata refresh is required'): each statement is sent again, fresh (it reads the table again),
    a bounded number of times (adapter.lakeplan_commit_metadata, plugins/dbt_lakeplan/concurrency.py). The write
    stays landed; what could not be recorded is told in one sentence with the statements to run. -#}

{#- What a statement recording the write names in place of the snapshot the write committed (its tag): the write's
    own, never main's head, which another run may have moved since. -#}
{% macro lakeplan_written_snapshot_marker() %}
    {{- return('<the snapshot this write committed>') -}}
{% endmacro %}

{#- The snapshot the write committed to `relation`'s main, by what is the write's own and not by its Spark
    application alone, which every session of the one Thrift Server shares: through its own `branch`, the branch's
    head (main was fast-forwarded to it; the branch is removed only after); straight to main, the one snapshot of
    this application on main since `start` (main before the write). `candidates` holds more than one where another
    session of the application committed there too: which is the write's cannot be told, and `id` is none. -#}
{% macro lakeplan_written_snapshot(relation, start, branch) %}
    {%- if branch -%}
        {{ return({'id': lakeplan.lakeplan_head_snapshot(relation, branch), 'candidates': []}) }}
    {%- endif -%}
    {%- set application = run_query('set spark.app.id').rows[0][1] -%}
    {%- set parents, own, candidates, walk = {}, [], [], namespace(at=none) -%}
    {%- set rows = run_query('select s.snapshot_id, s.parent_id, ' ~ "s.summary['spark.app.id'] = "
        ~ lakeplan.lakeplan_string_literal(application) ~ ', r.name is not null from ' ~ relation ~ '.snapshots as s '
        ~ 'left join ' ~ relation ~ ".refs as r on r.name = 'main' and r.snapshot_id = s.snapshot_id").rows -%}
    {%- for row in rows -%}
        {%- do parents.update({row[0]: row[1]}) -%}
        {%- if row[2] -%}{%- do own.append(row[0]) -%}{%- endif -%}
        {%- if row[3] -%}{%- set walk.at = row[0] -%}{%- endif -%}
    {%- endfor -%}
    {%- for _ in rows -%}
        {%- if walk.at is not none and walk.at != start -%}
            {%- if walk.at in own -%}{%- do candidates.append(walk.at) -%}{%- endif -%}
            {%- set walk.at = parents.get(walk.at) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return({'id': candidates[0] if candidates | length == 1 else none, 'candidates': candidates}) }}
{% endmacro %}

{#- Where the write's own snapshot is found once `step` has run (for `records` that tag it): the run's branch, or
    main's head as the write starts (none: no table yet, every snapshot is after it; dbt's relations as the run began
    know of every table but this run's own); nothing for any other step. -#}
{% macro lakeplan_written_where(step, records) %}
    {%- set relation = records[0].records if records else none -%}
    {%- if step.name != 'main' or lakeplan.lakeplan_written_snapshot_marker() not in records
        | map(attribute='sql') | join('\n') -%}
        {{ return({}) }}
    {%- elif step.branch -%}
        {{ return({'branch': step.branch}) }}
    {%- endif -%}
    {{ return({'start': none if load_relation(relation) is none else lakeplan.lakeplan_head_snapshot(relation)}) }}
{% endmacro %}

{#- Runs `statements`, lakeplan's records of the write that has just landed in `relation`, in order; returns them as
    they ran. Those that other runs' commits kept from committing are told after the rest have run, and so is a
    statement naming the write's snapshot where which one it is cannot be told (lakeplan_written_snapshot: `start`,
    `branch`). -#}
{% macro lakeplan_record_after_write(relation, statements, start=none, branch=none) %}
    {%- set marker = lakeplan.lakeplan_written_snapshot_marker() -%}
    {%- set written = lakeplan.lakeplan_written_snapshot(relation, start, branch) if marker in statements | join('\n')
        else {'id': none, 'candidates': []} -%}
    {%- set untold = lakeplan.lakeplan_unknown_write_reason(relation, written.candidates) -%}
    {%- set ran, unrecorded = [], [] -%}
    {%- for statement in statements -%}
        {%- set sql = statement if untold else statement | replace(' as of version ' ~ marker,
            '' if written.id is none else ' as of version ' ~ written.id) -%}
        {%- do ran.append(sql) -%}
        {%- set error = untold if untold and marker in sql else adapter.lakeplan_commit_metadata(sql, told=true) -%}
        {%- if error -%}{%- do unrecorded.append('`' ~ sql ~ '` (' ~ error.rstrip('.') ~ ')') -%}{%- endif -%}
    {%- endfor -%}
    {%- if unrecorded -%}
        {%- do adapter.lakeplan_stop('`' ~ model.name ~ '`\'s write landed in ' ~ relation
            ~ (' (snapshot ' ~ written.id ~ ')' if written.id is not none else '') ~ ', but other runs\' '
            ~ 'commits to ' ~ relation ~ ' kept lakeplan from recording it, so these were not made: '
            ~ unrecorded | join('; ') ~ '. Fix: once no other run writes ' ~ relation ~ ', run them in that order'
            ~ (', with the write\'s own snapshot in place of ' ~ marker if untold else '') ~ ', before `'
            ~ model.name ~ '` runs again.') -%}
    {%- endif -%}
    {{ return(ran) }}
{% endmacro %}

{#- Why the write's snapshot cannot be named: `candidates`, more than one snapshot of this Spark application on main
    since the write began (another session of it committed too); none where it can. -#}
{% macro lakeplan_unknown_write_reason(relation, candidates) %}
    {%- if candidates | length < 2 -%}{{ return(none) }}{%- endif -%}
    {{ return('snapshots ' ~ candidates | reverse | join(', ') ~ ' of ' ~ relation ~ ' since this write began are '
        ~ 'all this Spark application\'s: another session of it wrote the table too, so which is this write\'s '
        ~ 'cannot be told; their summaries in `select * from ' ~ relation ~ '.snapshots` show the rows each wrote') }}
{% endmacro %}

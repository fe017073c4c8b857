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

{#- The snapshot the write just committed to `relation`'s main: the latest in main's history that this Spark
    application committed (another run's commit since then is another application's); none if there is none. -#}
{% macro lakeplan_written_snapshot(relation) %}
    {%- set application = run_query('set spark.app.id').rows[0][1] -%}
    {%- set rows = run_query('select h.snapshot_id from ' ~ relation ~ '.history as h join ' ~ relation
        ~ '.snapshots as s on h.snapshot_id = s.snapshot_id where h.is_current_ancestor and '
        ~ "s.summary['spark.app.id'] = " ~ lakeplan.lakeplan_string_literal(application)
        ~ ' order by h.made_current_at desc limit 1').rows -%}
    {{ return(rows[0][0] if rows else none) }}
{% endmacro %}

{#- Runs `statements`, lakeplan's records of the write that has just landed in `relation`, in order; returns them as
    they ran. Those that other runs' commits kept from committing are told after the rest have run. -#}
{% macro lakeplan_record_after_write(relation, statements) %}
    {%- set marker = lakeplan.lakeplan_written_snapshot_marker() -%}
    {%- set written = lakeplan.lakeplan_written_snapshot(relation) if marker in statements | join('\n') else none -%}
    {%- set ran, unrecorded = [], [] -%}
    {%- for statement in statements -%}
        {%- set sql = statement | replace(' as of version ' ~ marker, '' if written is none
            else ' as of version ' ~ written) -%}
        {%- do ran.append(sql) -%}
        {%- set error = adapter.lakeplan_commit_metadata(sql, told=true) -%}
        {%- if error -%}{%- do unrecorded.append('`' ~ sql ~ '` (' ~ error.rstrip('.') ~ ')') -%}{%- endif -%}
    {%- endfor -%}
    {%- if unrecorded -%}
        {%- do adapter.lakeplan_stop('`' ~ model.name ~ '`\'s write landed in ' ~ relation
            ~ (' (snapshot ' ~ written ~ ')' if written is not none else '') ~ ', but other runs\' commits to '
            ~ relation ~ ' kept lakeplan from recording it, so these were not made: ' ~ unrecorded | join('; ')
            ~ '. Fix: once no other run writes ' ~ relation ~ ', run them in that order, before `' ~ model.name
            ~ '` runs again.') -%}
    {%- endif -%}
    {{ return(ran) }}
{% endmacro %}

{#- Tombstones: a deleted key keeps the sequence of its delete, so a later run's row with a lower sequence loses
    against the delete exactly as it loses against a stored row. They live in a side table beside the model's
    (`<table>__lakeplan_tombstones`: the key, `lakeplan_sequence`, `lakeplan_deleted_at`), never in the table
    users read, and are removed `tombstone_retention_days` (default 7) after the delete. The side table is written
    before the table itself: a write that fails after it leaves tombstones of deletes not yet applied, which
    change nothing that applying the same changes again would not. -#}

{% macro lakeplan_tombstone_relation(relation) %}
    {{ return(api.Relation.create(database=relation.database, schema=relation.schema,
        identifier=relation.identifier ~ '__lakeplan_tombstones', type='table')) }}
{% endmacro %}

{#- How long a model's tombstones are kept, in days: its upsert's or its partial-update target's setting. -#}
{% macro lakeplan_tombstone_retention_days() %}
    {{ return(lakeplan.lakeplan_plan().tombstone_retention_days) }}
{% endmacro %}

{#- Records this run's deletes: `deletes` is a query of the key columns and `lakeplan_sequence` (one row per -D);
    per key the highest sequence is kept. `creates` starts the side table afresh (lakeplan_forgets_deletes: a first
    run; a --full-refresh keeps it unless told to forget). Returns the side table, or none while it holds no tombstone
    (then the write need not read it). A run without deletes and without expired tombstones writes nothing to it;
    `record=false` (`dbt compile`, `--empty`) writes nothing at all. -#}
{% macro lakeplan_write_tombstones(relation, deletes, keys, creates, record=true) %}
    {%- set tombstones = lakeplan.lakeplan_tombstone_relation(relation) -%}
    {%- set existing = none if creates else load_relation(tombstones) -%}
    {%- set expired = 'lakeplan_deleted_at < current_timestamp() - make_dt_interval('
        ~ lakeplan.lakeplan_tombstone_retention_days() ~ ')' -%}
    {%- set latest -%}
        select {{ lakeplan.lakeplan_quote_list(keys) }}, max(lakeplan_sequence) as lakeplan_sequence,
            current_timestamp() as lakeplan_deleted_at
        from ({{ deletes }}) as lakeplan_deletes
        where lakeplan_sequence is not null
        group by {{ lakeplan.lakeplan_quote_list(keys) }}
    {%- endset -%}
    {%- set stored = '(select count(*) from ' ~ tombstones ~ ' where ' ~ expired ~ '), (select count(*) from '
        ~ tombstones ~ ')' if existing else '0, 0' -%}
    {%- set counts = run_query('select (select count(*) from (' ~ latest ~ ')), ' ~ stored).rows[0] -%}
    {%- set new, expiring, kept = counts[0], counts[1], counts[2] - counts[1] -%}
    {%- if not record -%}{#- counted only (`dbt compile`, `--empty`) -#}
    {%- elif existing is none -%}
        {%- do lakeplan.lakeplan_execute('create or replace table ' ~ tombstones ~ ' using iceberg as ' ~ latest
            if new > 0 else 'drop table if exists ' ~ tombstones ~ ' purge') -%}
    {%- elif new > 0 or expiring > 0 -%}
        {%- call statement('tombstones') -%}
            merge into {{ tombstones }} as lakeplan_tombstone
            using ({{ latest }}) as lakeplan_delete
            on {{ lakeplan.lakeplan_key_matches('lakeplan_tombstone', 'lakeplan_delete', keys) }}
            when matched and lakeplan_delete.lakeplan_sequence > lakeplan_tombstone.lakeplan_sequence then update set *
            when not matched then insert *
            when not matched by source and lakeplan_tombstone.{{ expired }} then delete
        {%- endcall -%}
    {%- endif -%}
    {{ return(tombstones if new > 0 or kept > 0 else none) }}
{% endmacro %}

{#- Whether a row of `alias` (with `sequence`, a SQL expression) is not older than its key's tombstone, joined as
    `lakeplan_tombstone`: no tombstone, or a sequence at least the delete's (a NULL sequence is the oldest). -#}
{% macro lakeplan_after_tombstone(sequence) %}
    {{ return('(lakeplan_tombstone.lakeplan_sequence is null or ' ~ sequence
        ~ ' >= lakeplan_tombstone.lakeplan_sequence)') }}
{% endmacro %}

{#- `left join` of the tombstones on the key columns of `alias`. -#}
{% macro lakeplan_join_tombstones(tombstones, alias, keys) %}
    {{ return('left join ' ~ tombstones ~ ' as lakeplan_tombstone on '
        ~ lakeplan.lakeplan_key_matches(alias, 'lakeplan_tombstone', keys)) }}
{% endmacro %}

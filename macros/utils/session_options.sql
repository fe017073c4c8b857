{#- Sets Spark session options for the statements that follow; returns the previous values (none where
    unset) so the same macro restores them. The planner checked keys and values (no `;`, no line breaks). -#}
{% macro lakeplan_set_session_options(options) %}
    {%- set previous = {} -%}
    {%- for key, value in (options or {}).items() -%}
        {%- set current = run_query('set ' ~ key).columns[1].values()[0] -%}
        {%- do previous.update({key: none if current == '<undefined>' else current}) -%}
        {%- if value is none -%}
            {%- do lakeplan.lakeplan_execute('reset ' ~ key) -%}
        {%- else -%}
            {%- do run_query('set ' ~ key ~ '=' ~ value) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(previous) }}
{% endmacro %}

{#- The session options of a MERGE into the existing `relation`, under the group's own `options` (these win).
    Before a copy-on-write MERGE, Spark finds the data files that hold a key of the change (its runtime group
    filter), which evaluates the whole change a second time. Where the table's data files total at most the
    model's `full_rewrite_max_mib`, rewriting all of them costs less than that, so the MERGE skips the search:
    the same rows, every file rewritten (docs/benchmarks.md, section 1). -#}
{% macro lakeplan_merge_session_options(relation, options=none) %}
    {%- set limit = lakeplan.lakeplan_plan().full_rewrite_max_mib -%}
    {%- set merged = {} -%}
    {%- if limit -%}
        {%- set size = run_query('select coalesce(sum(file_size_in_bytes), 0) from ' ~ relation ~ '.data_files')
            .columns[0].values()[0] -%}
        {%- if size <= limit * 1048576 -%}
            {%- do merged.update({'spark.sql.optimizer.runtime.rowLevelOperationGroupFilter.enabled': 'false'}) -%}
        {%- endif -%}
    {%- endif -%}
    {%- do merged.update(options or {}) -%}
    {{ return(merged) }}
{% endmacro %}

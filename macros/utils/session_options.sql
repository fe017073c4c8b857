{#- The comment line that heads a statement whose Spark settings are `options` for that statement alone:
    lakeplan's statement handler (plugins/dbt_lakeplan/statement_options.py) sets them before it and puts the
    session's own values back after it, also when it fails (Jinja has no `finally`). Empty without options. The
    planner checked keys and values (no `;`, no line breaks). `origin`: whose settings they are, named by an
    error about one of them (e.g. "the write_options of `m`"). -#}
{% macro lakeplan_statement_options(options, origin=none) %}
    {%- if options -%}
        -- lakeplan session options: {{ tojson(options) }}{{ '\n' }}
        {%- if origin -%}-- set by: {{ origin }}{{ '\n' }}{%- endif -%}
    {%- endif -%}
{% endmacro %}

{#- The session options of a MERGE into the existing `relation`, under the group's own `options` (these win).
    Before a copy-on-write MERGE, Spark finds the data files that hold a key of the change (its runtime group
    filter), which evaluates the whole change a second time. Where the table's data files total at most the
    model's `full_rewrite_max_mib`, rewriting all of them costs less than that, so the MERGE skips the search:
    the same rows, every file rewritten (docs/benchmarks.md, section 1). `staging`: `relation` is the copy this run
    creates, which does not exist yet when the statement is built; it holds only this run's earlier groups, whose
    keys a later group's mostly share, so it is rewritten whole. `change_mode`: how the MERGE lands
    (lakeplan_change_mode); merge-on-read rewrites no data file, so there is no search to skip. A merge-on-read
    MERGE lands a small change, where compiling Spark's whole-stage generated code for a wide statement costs more
    than the code saves: it runs without (bench/merge_codegen.py: 1M keys × 121 columns, 1% changed, 25 s against
    34 s; a copy-on-write full recompute measured both ways, one repeat each, so it keeps Spark's default). -#}
{% macro lakeplan_merge_session_options(relation, options=none, staging=false, change_mode=none) %}
    {%- set limit = lakeplan.lakeplan_plan().full_rewrite_max_mib if change_mode != 'merge-on-read' else 0 -%}
    {%- set merged = {} -%}
    {%- if limit -%}
        {%- set size = 0 if staging else run_query(
            'select coalesce(sum(file_size_in_bytes), 0) from ' ~ relation ~ '.data_files').columns[0].values()[0] -%}
        {%- if size <= limit * 1048576 -%}
            {%- do merged.update({'spark.sql.optimizer.runtime.rowLevelOperationGroupFilter.enabled': 'false'}) -%}
        {%- endif -%}
    {%- endif -%}
    {%- if change_mode == 'merge-on-read' -%}
        {%- do merged.update({'spark.sql.codegen.wholeStage': 'false'}) -%}
    {%- endif -%}
    {%- do merged.update(options or {}) -%}
    {{ return(merged) }}
{% endmacro %}

{#- Whether a write starts the model's remembered deletes afresh: when it creates a table that was not there (first
    run, or a view in its place), or rebuilds one (--full-refresh, a rebuild by on_state_mismatch) of a model that
    var `lakeplan_forget_deletes` lists. Otherwise a rebuild keeps them: a key deleted before it stays deleted
    against the changelog's older rows. `creates`: the write creates the table; `existing`: what was there. -#}
{% macro lakeplan_forgets_deletes(creates, existing) %}
    {{ return(creates and (existing is none or existing.is_view or lakeplan.lakeplan_plan().forget_deletes)) }}
{% endmacro %}

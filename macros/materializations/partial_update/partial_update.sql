{#- A partial-update target (FLIP-506 sink reuse): each write group of members that lakeplan's plugin
    formed is one statement and one Iceberg commit: UNION ALL of the members -> collapse -> MERGE.
    Every member and the overlaps between them are checked before anything is written. -#}
{% materialization partial_update, adapter='spark' %}
    {%- set spec = lakeplan.lakeplan_validate_get_partial_update_spec() -%}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set existing_relation = load_relation(this) -%}

    {%- set plans = [] -%}
    {%- for group in spec.groups -%}
        {%- do plans.append(lakeplan.lakeplan_partial_update_plan(group, spec)) -%}
    {%- endfor -%}
    {%- do lakeplan.lakeplan_validate_partial_update_overlaps(plans, spec) -%}
    {#- Spark checks a setting's value when it is set: every group's options, around a no-op, before the first
        group writes -#}
    {%- for plan in plans if plan.group.write_options -%}
        {%- set header = lakeplan.lakeplan_statement_options(plan.group.write_options, plan.options_origin) -%}
        {%- do run_query(header ~ 'select 1') -%}
    {%- endfor -%}

    {{ run_hooks(pre_hooks) }}

    {%- set creates = existing_relation is none or existing_relation.is_view or lakeplan.should_full_refresh() -%}
    {%- if creates and existing_relation is not none and existing_relation.is_view -%}
        {%- do adapter.drop_relation(existing_relation) -%}
    {%- endif -%}

    {%- do spec.update({'tombstones': lakeplan.lakeplan_partial_update_tombstones(target_relation, plans, spec, creates)}) -%}
    {%- set statements = lakeplan.lakeplan_partial_update_writes(target_relation, plans, spec, creates) -%}
    {#- dbt keeps the statement named `main` in target/run/: every statement of the write, in the order they ran -#}
    {%- do write(statements | join(';\n\n')) -%}

    {%- if not creates -%}{%- do lakeplan.lakeplan_record_state_after_write() -%}{%- endif %}
    {% do persist_docs(target_relation, model) %}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

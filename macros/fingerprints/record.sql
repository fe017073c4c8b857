{#- Whether the node keeps a table's rows that the state check guards: its plan's kind says (the materializations'
    registry, plugins/dbt_lakeplan/materializations.py). -#}
{% macro lakeplan_is_stateful(node=none) %}
    {%- set node = node or model -%}
    {{ return(node.resource_type == 'model' and lakeplan.lakeplan_plan(node).kind.stateful) }}
{% endmacro %}

{#- The table properties a stateful model records of the logic that built it, read back by the state check:
    its fingerprint, its own logic, every ancestor's own logic and, for a partial-update target, its parts. -#}
{% macro lakeplan_fingerprint_properties(node=none) %}
    {%- set node = node or model -%}
    {%- set current = node.config.get('lakeplan_fingerprint') -%}
    {%- if current is none or not lakeplan.lakeplan_is_stateful(node) -%}{{ return({}) }}{%- endif -%}
    {%- set properties = {
        'lakeplan.fingerprint': current.fingerprint,
        'lakeplan.fingerprint.version': current.version,
        'lakeplan.fingerprint.logic': current.logic,
        'lakeplan.fingerprint.ancestors': tojson(current.ancestors),
    } -%}
    {%- if current.parts -%}
        {%- do properties.update({'lakeplan.fingerprint.parts': tojson(current.parts)}) -%}
    {%- endif -%}
    {{ return(properties) }}
{% endmacro %}

{#- What the table records of the logic that built it (its lakeplan.* table properties). -#}
{% macro lakeplan_stored_fingerprint(relation) %}
    {%- set properties = lakeplan.lakeplan_read_table_properties(relation) -%}
    {%- set ancestors = properties.get('lakeplan.fingerprint.ancestors') -%}
    {%- set parts = properties.get('lakeplan.fingerprint.parts') -%}
    {{ return({
        'fingerprint': properties.get('lakeplan.fingerprint'),
        'version': properties.get('lakeplan.fingerprint.version'),
        'logic': properties.get('lakeplan.fingerprint.logic'),
        'ancestors': fromjson(ancestors) if ancestors else none,
        'parts': fromjson(parts) if parts else none,
    }) }}
{% endmacro %}

{#- Records the current logic in an existing table: a metadata change, no snapshot; once per verdict. -#}
{% macro lakeplan_record_state(verdict) %}
    {%- if verdict.recorded -%}{{ return('') }}{%- endif -%}
    {%- set node, relation = verdict.node, verdict.relation -%}
    {%- set properties = lakeplan.lakeplan_fingerprint_properties(node) -%}
    {%- if verdict.action == 'accept' -%}
        {%- do properties.update({
            'lakeplan.fingerprint.accepted_from': verdict.stored.fingerprint,
            'lakeplan.fingerprint.accepted_at': run_started_at.isoformat(),
        }) -%}
    {%- endif -%}
    {%- set assignments = lakeplan.lakeplan_properties_sql(properties) -%}
    {%- do run_query('alter table ' ~ relation ~ ' set tblproperties (' ~ assignments ~ ')') -%}
    {%- do verdict.update({'recorded': true}) -%}
{% endmacro %}

{#- `'key' = 'value', ...`: every key and value a quoted literal. -#}
{% macro lakeplan_properties_sql(properties) %}
    {%- set pairs = [] -%}
    {%- for key, value in properties.items() -%}
        {%- do pairs.append(lakeplan.lakeplan_string_literal(key) ~ ' = ' ~ lakeplan.lakeplan_string_literal(value)) -%}
    {%- endfor -%}
    {{ return(pairs | join(', ')) }}
{% endmacro %}

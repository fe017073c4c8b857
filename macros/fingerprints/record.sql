{#- The table properties a stateful model records of the logic that built it, read back by the state check. -#}
{% macro lakeplan_fingerprint_properties() %}
    {%- set current = config.get('lakeplan_fingerprint') -%}
    {%- if current is none or not lakeplan.lakeplan_is_stateful() -%}{{ return({}) }}{%- endif -%}
    {{ return({
        'lakeplan.fingerprint': current.fingerprint,
        'lakeplan.fingerprint.version': current.version,
        'lakeplan.fingerprint.logic': current.logic,
        'lakeplan.fingerprint.inputs': tojson(current.inputs),
    }) }}
{% endmacro %}

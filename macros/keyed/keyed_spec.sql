{#- A keyed layout declaration, checked: {keys: [...], key_groups: N}, or none when nothing is declared.
    Used for source meta (`pre_keyed_by` + `key_groups`) and model config (`keyed_by` + `key_groups`). -#}
{% macro lakeplan_keyed_spec(keys_value, groups_value, owner, keys_setting) %}
    {%- if keys_value is none and groups_value is none -%}{{ return(none) }}{%- endif -%}
    {%- set keys = lakeplan.lakeplan_name_list(keys_value, owner, keys_setting) -%}
    {%- if not keys or groups_value is none -%}
        {%- do exceptions.raise_compiler_error(
            owner ~ ' sets only one of `' ~ keys_setting ~ '` (' ~ keys_value | tojson ~ ') and `key_groups` ('
            ~ groups_value | tojson ~ '); a keyed layout needs both: the key columns and the number of buckets.\n'
            ~ 'Fix: set both, e.g. `' ~ keys_setting ~ ': [customer_key]` and `key_groups: 8`, or neither.') -%}
    {%- endif -%}
    {%- do lakeplan.lakeplan_check_parallelism(groups_value, owner, 'key_groups') -%}
    {{ return({'keys': keys, 'key_groups': groups_value}) }}
{% endmacro %}

{#- The keyed layout a model's config declares; keyed models are Iceberg tables bucketed on one column. -#}
{% macro lakeplan_model_keyed_spec() %}
    {%- set owner = 'model `' ~ model.name ~ '`' -%}
    {%- set spec = lakeplan.lakeplan_keyed_spec(config.get('keyed_by'), config.get('key_groups'), owner, 'keyed_by') -%}
    {%- if spec and (spec['keys'] | length != 1 or config.get('file_format') != 'iceberg') -%}
        {%- do exceptions.raise_compiler_error(
            owner ~ ' sets keyed_by ' ~ spec['keys'] | tojson ~ ' on file_format ' ~ config.get('file_format') | tojson
            ~ '.\nA keyed model is an Iceberg table partitioned by bucket(key_groups, key): Iceberg buckets one '
            ~ 'column per transform, and two transforms would make key_groups x key_groups buckets.\n'
            ~ 'Fix: key the model by one column (e.g. a surrogate key) on `file_format: iceberg`.') -%}
    {%- endif -%}
    {{ return(spec) }}
{% endmacro %}

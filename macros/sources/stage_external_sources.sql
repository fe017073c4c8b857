{#- Registers each source with an `external: {location, using}` property as an external table,
    the part of dbt-external-tables this project needs (dbt packages are out of reach here).
    Re-created on every run so a new location (another TPC-H scale factor) always takes effect. -#}
{% macro stage_external_sources() %}
    {{ return(adapter.dispatch('stage_external_sources', 'lakeplan')()) }}
{% endmacro %}

{% macro default__stage_external_sources() %}
    {% if not execute %}{{ return('') }}{% endif %}
    {% set external_sources = graph.sources.values() | selectattr('external') | sort(attribute='unique_id') %}
    {% for node in external_sources if node.external.location %}
        {% set relation = api.Relation.create(schema=node.schema, identifier=node.identifier) %}
        {% do lakeplan_execute('create schema if not exists ' ~ adapter.quote(node.schema)) %}
        {% do lakeplan_execute('drop table if exists ' ~ relation) %}
        {% do lakeplan_execute(
            'create table ' ~ relation ~ ' using ' ~ (node.external.using or 'parquet')
            ~ ' location ' ~ lakeplan_string_literal(node.external.location)) %}
    {% endfor %}
    {{ return('') }}
{% endmacro %}

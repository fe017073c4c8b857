{#- Registers each source with an `external: {location, using}` property as an external table,
    the part of dbt-external-tables this project needs (dbt packages are out of reach here).
    Re-created on every run so a new location (another TPC-H scale factor) always takes effect; only the
    sources a selected node reads, so a command that reads none of them runs no statement at all. -#}
{% macro stage_external_sources() %}
    {{ return(adapter.dispatch('stage_external_sources', 'lakeplan')()) }}
{% endmacro %}

{% macro default__stage_external_sources() %}
    {% if not execute %}{{ return('') }}{% endif %}
    {% set read = [] %}
    {% for unique_id in selected_resources %}
        {% do read.extend(graph.nodes.get(unique_id, {}).get('depends_on', {}).get('nodes', [])) %}
    {% endfor %}
    {% set external_sources = graph.sources.values() | selectattr('external') | selectattr('unique_id', 'in', read)
        | sort(attribute='unique_id') %}
    {% for node in external_sources if node.external.location %}
        {% set relation = api.Relation.create(schema=node.schema, identifier=node.identifier) %}
        {% do lakeplan.lakeplan_execute('create schema if not exists ' ~ adapter.quote(node.schema)) %}
        {% do lakeplan.lakeplan_execute('drop table if exists ' ~ relation) %}
        {#- the header names the source where Spark's error does not (spark_adapter.about_the_statement) -#}
        {% do lakeplan.lakeplan_execute(
            '-- stage source `' ~ node.source_name ~ '.' ~ node.name ~ '` from ' ~ node.external.location ~ '\n'
            ~ 'create table ' ~ relation ~ ' using ' ~ (node.external.using or 'parquet')
            ~ ' location ' ~ lakeplan.lakeplan_string_literal(node.external.location)) %}
    {% endfor %}
    {{ return('') }}
{% endmacro %}

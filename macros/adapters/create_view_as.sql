{#- dbt-spark's view DDL, with one change: a view is dropped and created, never `create or replace`d.
    With Iceberg's SparkSessionCatalog, `create or replace view` takes Iceberg's view path, which keeps
    the old query text under the new column list: the next read fails (INCOMPATIBLE_VIEW_SCHEMA_CHANGE),
    or, when the columns did not change, silently returns the old query's rows. -#}
{% macro spark__create_view_as(relation, sql) -%}
    {%- if execute -%}
        {%- do lakeplan.lakeplan_execute('drop view if exists ' ~ relation) -%}
    {%- endif %}
    create view {{ relation }}
    {% if config.persist_column_docs() -%}
    {% set model_columns = model.columns %}
    {% set query_columns = get_columns_in_query(sql) %}
        (
        {{ get_persist_docs_column_list(model_columns, query_columns) }}
        )
    {% endif %}
    {{ comment_clause() }}
    {%- set contract_config = config.get('contract') -%}
    {%- if contract_config.enforced -%}
        {{ get_assert_columns_equivalent(sql) }}
    {%- endif %}
    as
    {{ sql }}
{%- endmacro %}

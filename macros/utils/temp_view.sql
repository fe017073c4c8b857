{#- A session temp view named after this model and a purpose: letters, digits and underscores only, so the
    name never needs quoting (an alias may have spaces, quotes or backticks). -#}
{% macro lakeplan_temp_view(purpose) %}
    {%- set name = modules.re.sub('[^0-9A-Za-z_]', '_', model.alias ~ '__lakeplan_' ~ purpose) -%}
    {{ return(api.Relation.create(identifier=name).include(database=false, schema=false)) }}
{% endmacro %}

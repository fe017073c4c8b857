{#- The comment line that marks the statement committing a write of `relation` (after its settings header, if any):
    the point of no return. lakeplan's statement handler (plugins/dbt_lakeplan/cancel.py) refuses a cancelled
    model's statements until this one has started; once it has committed, the model's other statements run and dbt
    reports it written, not cancelled. -#}
{% macro lakeplan_commit_marker(relation) %}
    {{- return('-- lakeplan: commits the write of ' ~ relation ~ '\n') -}}
{% endmacro %}

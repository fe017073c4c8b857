{#- When a model reads keyed inputs with different key_groups, Spark cannot join them bucket by bucket:
    this logs which of them the real plan (EXPLAIN) reshuffles, so the cost is never silent. -#}
{% macro lakeplan_report_keyed_joins(sql) %}
    {%- set inputs = lakeplan.lakeplan_keyed_inputs() -%}
    {%- if inputs | map(attribute='key_groups') | unique | list | length < 2 -%}{{ return('') }}{%- endif -%}
    {%- set lines = run_query('explain ' ~ sql).columns[0].values()[0].split('\n') -%}
    {%- set reshuffled = [] -%}
    {%- for input in inputs if lakeplan.lakeplan_plan_moves(lines, input.table) -%}
        {%- do reshuffled.append(input.name) -%}
    {%- endfor -%}
    {%- set sizes = [] -%}
    {%- for input in inputs -%}{%- do sizes.append(input.name ~ ': ' ~ input.key_groups) -%}{%- endfor -%}
    {%- do log('lakeplan: model `' ~ model.name ~ '` reads keyed inputs with different key_groups ('
        ~ sizes | join(', ') ~ '); Spark reshuffles ' ~ (reshuffled | join(', ') or 'none of them')
        ~ '. Equal key_groups would let them join without a shuffle.', info=true) -%}
    {{ return('') }}
{% endmacro %}

{#- The model's inputs with a keyed layout: keyed models and pre-keyed sources, as {name, table, key_groups}. -#}
{% macro lakeplan_keyed_inputs() %}
    {%- set inputs = [] -%}
    {#- a unit test's node depends on nothing that has a layout -#}
    {%- set parents = (model.get('depends_on') or {}).get('nodes', []) -%}
    {%- for unique_id in parents if unique_id in graph.nodes or unique_id in graph.sources -%}
        {%- set node = graph.nodes.get(unique_id) or graph.sources.get(unique_id) -%}
        {#- seeds and snapshots have no plan, and no layout -#}
        {%- set keyed = (node.config.get('lakeplan_plan') or {}).get('keyed') -%}
        {%- if keyed -%}
            {%- set identifier = node.identifier if node.resource_type == 'source' else node.alias -%}
            {%- do inputs.append(
                {'name': node.name, 'table': node.schema ~ '.' ~ identifier, 'key_groups': keyed.key_groups}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(inputs) }}
{% endmacro %}

{#- Whether a plan moves the rows of `table` between tasks: an Exchange above one of its scans. -#}
{% macro lakeplan_plan_moves(lines, table) %}
    {%- for index in range(lines | length) if 'Scan' in lines[index] and (table ~ '[') in lines[index] -%}
        {%- set walk = namespace(depth=lakeplan.lakeplan_plan_depth(lines[index]), moved=false) -%}
        {%- for above in range(index - 1, -1, -1) if lakeplan.lakeplan_plan_depth(lines[above]) < walk.depth -%}
            {%- set walk.depth = lakeplan.lakeplan_plan_depth(lines[above]) -%}
            {%- if 'Exchange' in lines[above] -%}{%- set walk.moved = true -%}{%- endif -%}
        {%- endfor -%}
        {%- if walk.moved -%}{{ return(true) }}{%- endif -%}
    {%- endfor -%}
    {{ return(false) }}
{% endmacro %}

{% macro lakeplan_plan_depth(line) %}
    {{ return(line | length - line.lstrip(' :+-') | length) }}
{% endmacro %}

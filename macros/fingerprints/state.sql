{#- dbt's lakeplan.should_full_refresh(), plus lakeplan's state check (FLIP-411) for one stateful model (incremental,
    upsert, partial-update target) when it runs. dbt asks this before compiling `is_incremental()`, so a stop
    comes before any SQL runs and a rebuild compiles the full query. `lakeplan.lakeplan_check_state()` (on-run-start)
    makes the same checks for every selected model before the first write. -#}
{% macro should_full_refresh() %}
    {%- set requested = config.get('full_refresh') -%}
    {%- if requested is none -%}{%- set requested = flags.FULL_REFRESH -%}{%- endif -%}
    {%- if requested or not lakeplan.lakeplan_state_check_applies() -%}{{ return(requested) }}{%- endif -%}
    {%- set verdict = lakeplan.lakeplan_state_verdict(model) -%}
    {%- if verdict.action == 'refuse' -%}
        {%- do exceptions.raise_compiler_error(verdict.message) -%}
    {%- elif verdict.action == 'rebuild' -%}
        {%- do log('lakeplan: ' ~ verdict.message ~ ' Rebuilding it (on_state_mismatch: full_refresh).', info=true) -%}
        {{ return(true) }}
    {%- elif verdict.action == 'ignore' -%}
        {%- do exceptions.warn('lakeplan: ' ~ verdict.message ~ ' Keeping the table (on_state_mismatch: ignore).') -%}
    {%- elif verdict.action in ['accept', 'evolve'] -%}
        {#- lakeplan's materializations record after their write (lakeplan_record_state_after_write), so a failed
            write records nothing; dbt-spark's incremental has no such step, so its accepted logic is recorded now
            (unless on-run-start did) -#}
        {%- if verdict.action == 'accept' and not lakeplan.lakeplan_plan().kind.merged -%}
            {%- do lakeplan.lakeplan_record_state(verdict) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return(false) }}
{% endmacro %}

{#- on-run-start: the state check of every selected stateful model, before anything is written, so one
    refusal stops the whole `dbt run` / `dbt build` instead of leaving the project half-updated. Accepted
    logic is recorded only when no model is refused (an upsert's or a target's after its write, as compatible
    changes are). -#}
{% macro lakeplan_check_state() %}
    {%- if not lakeplan.lakeplan_state_check_applies() or flags.FULL_REFRESH -%}{{ return('') }}{%- endif -%}
    {%- set verdicts = [] -%}
    {%- for unique_id in selected_resources if unique_id in graph.nodes
        and not graph.nodes[unique_id].config.get('full_refresh') -%}
        {%- do verdicts.append(lakeplan.lakeplan_state_verdict(graph.nodes[unique_id])) -%}
    {%- endfor -%}
    {%- set refused = verdicts | selectattr('action', 'equalto', 'refuse') | map(attribute='message') | sort | list -%}
    {%- if refused -%}
        {#- several models' sentences numbered, a line each (a trial read them run together as one paragraph) -#}
        {%- set told = [] -%}
        {%- for message in refused -%}
            {%- do told.append((loop.index ~ '. ' if refused | length > 1 else '') ~ message) -%}
        {%- endfor -%}
        {%- do exceptions.raise_compiler_error(told | join('\n') ~ ' Nothing was written.') -%}
    {%- endif -%}
    {%- for verdict in verdicts
        if verdict.action == 'accept' and not lakeplan.lakeplan_plan(verdict.node).kind.merged -%}
        {%- do lakeplan.lakeplan_record_state(verdict) -%}
    {%- endfor -%}
    {{ return('') }}
{% endmacro %}

{#- The check guards writes: `dbt run` and `dbt build`. compile, docs generate, show and ls never stop on it, nor
    does --empty, which writes no existing table. -#}
{% macro lakeplan_state_check_applies() %}
    {{ return(execute and flags.WHICH in ['run', 'build'] and not lakeplan.lakeplan_empty_run()) }}
{% endmacro %}

{#- What to do with a model's existing table: {action, node, relation, stored, changes, message, recorded}. action is
    none (nothing recorded, or the same logic), evolve (only new members or columns: record them), accept
    (listed in var lakeplan_accept_state: record the current logic), or per on_state_mismatch refuse, rebuild
    or ignore. Decided once per invocation: on-run-start, the write's compile and its record after the write ask
    for the same verdict (`recorded` tells whether its logic was recorded yet). -#}
{% macro lakeplan_state_verdict(node) %}
    {%- set verdicts = lakeplan.lakeplan_invocation_cache('lakeplan_state_verdicts') -%}
    {%- if node.unique_id not in verdicts -%}
        {%- do verdicts.update({node.unique_id: lakeplan.lakeplan_decide_state(node)}) -%}
    {%- endif -%}
    {{ return(verdicts[node.unique_id]) }}
{% endmacro %}

{% macro lakeplan_decide_state(node) %}
    {%- set verdict = {'action': 'none', 'node': node, 'recorded': false} -%}
    {%- set current = node.config.get('lakeplan_fingerprint') -%}
    {%- if current is none or not lakeplan.lakeplan_is_stateful(node) -%}{{ return(verdict) }}{%- endif -%}
    {%- set policy = lakeplan.lakeplan_plan(node).on_state_mismatch -%}
    {%- set relation = adapter.get_relation(node.database, node.schema, node.alias) -%}
    {%- if relation is none or relation.is_view -%}{{ return(verdict) }}{%- endif -%}
    {%- set stored = lakeplan.lakeplan_stored_fingerprint(relation) -%}
    {%- do verdict.update({'relation': relation, 'stored': stored}) -%}
    {%- if stored.fingerprint is none -%}
        {%- do log('lakeplan: model `' ~ node.name ~ '`: its table records no fingerprint (built before lakeplan '
            ~ 'recorded them); the next --full-refresh records one.', info=true) -%}
    {%- elif stored.fingerprint != current.fingerprint -%}
        {%- set unkept = [] -%}
        {%- set changes = lakeplan.lakeplan_state_changes(stored, current, node, relation, unkept) -%}
        {%- do verdict.update({'changes': changes}) -%}
        {%- set actions = {'fail': 'refuse', 'full_refresh': 'rebuild', 'ignore': 'ignore'} -%}
        {%- if not changes -%}
            {%- do verdict.update({'action': 'evolve'}) -%}
        {%- elif lakeplan.lakeplan_plan(node).accept_state -%}
            {%- do verdict.update({'action': 'accept'}) -%}
        {%- else -%}
            {%- do verdict.update({'action': actions[policy], 'message': lakeplan.lakeplan_state_mismatch_message(
                node, stored, current, changes, policy == 'fail', unkept)}) -%}
        {%- endif -%}
        {%- if verdict.action in ['evolve', 'accept'] -%}
            {%- do log('lakeplan: model `' ~ node.name ~ '`: '
                ~ ('accepting its current logic (' ~ changes | join('; ') ~ ')' if changes else 'its logic changed only '
                ~ 'where its table takes it as it is (new members or columns, a type it stores alike or widens in place)')
                ~ '; the table keeps its rows and records fingerprint ' ~ current.fingerprint
                ~ ' once this run writes it (a failed write records nothing).', info=true) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return(verdict) }}
{% endmacro %}

{#- Why the stored logic of `node`'s table `relation` does not fit, as a list of findings; empty when the current
    logic only adds parts (a partial-update target's new members or columns), which the table can take. The nodes
    named are the ones that changed themselves: each ancestor's own logic is compared, not the input it reaches
    the model through; a member that changed itself is named once, as a member. `unkept`: filled with the columns
    whose new type the table cannot take (lakeplan_target_part_changes). -#}
{% macro lakeplan_state_changes(stored, current, node, relation, unkept) %}
    {%- set changes, changed_members = [], [] -%}
    {%- if stored.version != current.version -%}
        {%- do changes.append('fingerprint_version ' ~ stored.version ~ ' -> ' ~ current.version) -%}
    {%- endif -%}
    {%- for ancestor, logic in (stored.ancestors.items() if stored.ancestors else []) | sort
        if ancestor in current.ancestors and current.ancestors[ancestor] != logic -%}
        {%- set member = ('member:' ~ ancestor) in (stored.parts or {}) -%}
        {%- if member -%}{%- do changed_members.append('member:' ~ ancestor) -%}{%- endif -%}
        {#- named as the user writes it: model `orders`, seed `segments`, source `raw.events` -#}
        {%- do changes.append(('member' if member else ancestor.split('.')[0]) ~ ' `' ~ ancestor.split('.', 2)[-1]
            ~ '` changed its own SQL, columns or configs') -%}
    {%- endfor -%}
    {%- if stored.parts and current.parts -%}
        {%- do changes.extend(lakeplan.lakeplan_target_part_changes(stored.parts, current.parts,
            current.columns or {}, changed_members, node, relation, unkept)) -%}
    {%- elif stored.logic != current.logic -%}
        {%- do changes.append('`' ~ node.name ~ '` changed its own SQL, columns or configs') -%}
    {%- endif -%}
    {%- if not changes and not (stored.parts and current.parts) -%}
        {%- do changes.append('its inputs (' ~ ('the table records no logic per input' if stored.ancestors is none
            else 'how they are chained, fingerprint_version v2') ~ ')') -%}
    {%- endif -%}
    {{ return(changes) }}
{% endmacro %}

{#- A partial-update target's removed or changed parts (settings, columns, members); new ones fit, and so does a
    column declared with a type Iceberg stores alike or widens in place (`columns`: name -> its declaration, whose
    parts at the narrower types adapter.lakeplan_earlier_parts gives; the write widens the stored column,
    lakeplan_widen_stored_columns). `named`: parts already named (a member that changed itself). A changed column
    names its type as the table `relation` stores it and as `node`'s YAML declares it; one whose values the stored
    type cannot all hold is added to `unkept` (how to set it back): the write refuses it, so accepting keeps no table. -#}
{% macro lakeplan_target_part_changes(stored_parts, current_parts, columns, named, node, relation, unkept) %}
    {%- set changes = [] -%}
    {%- for part, digest in stored_parts.items() if part not in named and current_parts.get(part) != digest
        and digest not in adapter.lakeplan_earlier_parts(columns.get(part.split(':', 1)[-1])
            if part.startswith('column:') else none) -%}
        {%- set name = part.split(':', 1)[-1] -%}
        {%- set retyped = part.startswith('column:') and part in current_parts -%}
        {%- set stored_type = (adapter.get_columns_in_relation(relation)
            | selectattr('name', 'in', [name, name | lower]) | map(attribute='dtype') | first) if retyped else none -%}
        {%- set declared = (node.columns.values() | selectattr('name', 'equalto', name) | map(attribute='data_type')
            | first) if retyped else none -%}
        {%- set types = lakeplan.lakeplan_plan(node).types if retyped else none -%}
        {%- set stores = lakeplan.lakeplan_iceberg_type(declared, types) if retyped and declared else none -%}
        {%- if stores and stored_type and stores != lakeplan.lakeplan_normal_type(stored_type, types) -%}
            {#- Iceberg changes a column's type in place only to widen it (and a widening is no change); the write
                takes a type whose every value the stored one holds (lakeplan_validate_stored_types) -#}
            {%- set kept = lakeplan.lakeplan_normal_type(stored_type) == 'string'
                or lakeplan.lakeplan_cast_is_lossless(declared, stored_type) -%}
            {%- do unkept.append('`' ~ name ~ '` back to ' ~ stored_type) if not kept else none -%}
            {%- do changes.append('column `' ~ name ~ '` changed its type: the table stores ' ~ stored_type
                ~ ', the YAML declares ' ~ declared ~ (' (accepting keeps ' ~ stored_type ~ ' and writes only values '
                ~ 'it holds' if kept else ' (which the table cannot take without a cast that may lose values, so '
                ~ 'accepting cannot keep it') ~ '; --full-refresh stores ' ~ stores ~ ')') -%}
        {%- elif retyped -%}
            {%- do changes.append('column `' ~ name ~ '` changed its merge rule or sequence group') -%}
        {%- else -%}
            {%- set label = ('column `' ~ name ~ '`') if part.startswith('column:')
                else ('member `' ~ name.split('.')[-1] ~ '`') if part.startswith('member:')
                else 'one of its unique_key, partial_update_on_delete and own SQL (one part of its fingerprint)' -%}
            {%- do changes.append(label ~ (' was removed' if part not in current_parts else ' changed')) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(changes) }}
{% endmacro %}

{#- One line, as lakeplan's other run-time errors, opening with the model's name: on-run-start's error is headed by the
    hook's name (`operation lakeplan-on-run-start-0`), not the model's. -#}
{% macro lakeplan_state_mismatch_message(node, stored, current, changes, with_fix, unkept) %}
    {%- set name = node.name -%}
    {%- set message = 'Model `' ~ name ~ '` (' ~ node.config.materialized ~ ') would reuse a table built by other '
        ~ 'logic: the table records fingerprint ' ~ stored.fingerprint ~ ' (' ~ stored.version ~ '), its logic is now '
        ~ current.fingerprint ~ ' (' ~ current.version ~ '). What changed: ' ~ changes | join('; ')
        ~ '. Reusing it would mix rows computed by the old logic with rows of the new.' -%}
    {%- set fix = ' Fix: to keep the table and what it accumulated, ' ~ ('set the data_type of ' ~ unkept | join(', ')
        ~ '; to rebuild it from scratch with the new types: dbt run --full-refresh -s ' ~ name ~ '.' if unkept
        else 'accept the current logic: dbt run -s ' ~ name ~ " --vars '{lakeplan_accept_state: [" ~ name
        ~ "]}'; to rebuild it from scratch: dbt run --full-refresh -s " ~ name ~ ' (or set on_state_mismatch: '
        ~ 'full_refresh to rebuild automatically, ignore to keep the table).') -%}
    {%- if with_fix -%}{%- set message = message ~ fix -%}{%- endif -%}
    {{ return(message) }}
{% endmacro %}

{#- After an upsert's or a partial-update target's write: accepted logic, and new parts (members, columns) its
    table took, are recorded now, not before, so a write that fails leaves the table's recorded logic as it was. -#}
{% macro lakeplan_record_state_after_write() %}
    {%- if not lakeplan.lakeplan_state_check_applies() -%}{{ return('') }}{%- endif -%}
    {%- set verdict = lakeplan.lakeplan_state_verdict(model) -%}
    {%- if verdict.action in ['evolve', 'accept'] -%}{%- do lakeplan.lakeplan_record_state(verdict) -%}{%- endif -%}
{% endmacro %}

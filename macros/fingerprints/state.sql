{#- dbt's should_full_refresh(), plus lakeplan's state check (FLIP-411): a stateful model (incremental,
    upsert, partial-update target) whose table was built by other logic is stopped, rebuilt or warned
    about, per `on_state_mismatch`. dbt asks this before compiling `is_incremental()`, so a stop comes
    before any SQL runs and a rebuild compiles the full query. -#}
{% macro should_full_refresh() %}
    {%- set requested = config.get('full_refresh') -%}
    {%- if requested is none -%}{%- set requested = flags.FULL_REFRESH -%}{%- endif -%}
    {%- if requested or not execute -%}{{ return(requested) }}{%- endif -%}
    {{ return(lakeplan.lakeplan_state_mismatch_rebuilds()) }}
{% endmacro %}

{% macro lakeplan_is_stateful() %}
    {%- set stateful = ['incremental', 'upsert', 'partial_update'] -%}
    {{ return(model.resource_type == 'model' and config.get('materialized') in stateful) }}
{% endmacro %}

{#- True when the table must be rebuilt; raises under `fail`; warns under `ignore`. -#}
{% macro lakeplan_state_mismatch_rebuilds() %}
    {%- set current = config.get('lakeplan_fingerprint') -%}
    {%- if current is none or not lakeplan.lakeplan_is_stateful() -%}{{ return(false) }}{%- endif -%}
    {%- set policy = config.get('on_state_mismatch', 'fail') -%}
    {%- set policies = ['fail', 'full_refresh', 'ignore'] -%}
    {%- if policy not in policies -%}
        {%- do exceptions.raise_compiler_error(
            'Unknown on_state_mismatch ' ~ policy | tojson ~ ' for model `' ~ model.name ~ '`.\n'
            ~ 'Allowed: ' ~ policies | join(', ') ~ ' (default fail).\nFix: set `on_state_mismatch` to one of them.') -%}
    {%- endif -%}
    {%- set relation = adapter.get_relation(this.database, this.schema, this.identifier) -%}
    {%- if relation is none or relation.is_view -%}{{ return(false) }}{%- endif -%}
    {%- set stored = lakeplan.lakeplan_stored_fingerprint(relation) -%}
    {%- if stored.fingerprint is none -%}
        {%- do log('lakeplan: model `' ~ model.name ~ '`: its table records no fingerprint (built before lakeplan '
            ~ 'recorded them); the next --full-refresh records one.', info=true) -%}
        {{ return(false) }}
    {%- endif -%}
    {%- if stored.fingerprint == current.fingerprint -%}{{ return(false) }}{%- endif -%}
    {%- set message = lakeplan.lakeplan_state_mismatch_message(stored, current) -%}
    {%- if policy == 'fail' -%}
        {%- do exceptions.raise_compiler_error(message ~ '\nFix: dbt run --full-refresh -s ' ~ model.name
            ~ '  (or set on_state_mismatch: full_refresh to rebuild automatically, ignore to keep the table).') -%}
    {%- elif policy == 'full_refresh' -%}
        {%- do log('lakeplan: ' ~ message ~ '\nRebuilding it (on_state_mismatch: full_refresh).', info=true) -%}
        {{ return(true) }}
    {%- endif -%}
    {%- do exceptions.warn('lakeplan: ' ~ message ~ '\nKeeping the table (on_state_mismatch: ignore).') -%}
    {{ return(false) }}
{% endmacro %}

{#- What the table records of the logic that built it (its lakeplan.* table properties). -#}
{% macro lakeplan_stored_fingerprint(relation) %}
    {%- set properties = {} -%}
    {%- for row in run_query('show tblproperties ' ~ relation).rows if row[0].startswith('lakeplan.fingerprint') -%}
        {%- do properties.update({row[0]: row[1]}) -%}
    {%- endfor -%}
    {%- set inputs = properties.get('lakeplan.fingerprint.inputs') -%}
    {{ return({
        'fingerprint': properties.get('lakeplan.fingerprint'),
        'version': properties.get('lakeplan.fingerprint.version'),
        'logic': properties.get('lakeplan.fingerprint.logic'),
        'inputs': fromjson(inputs) if inputs else {},
    }) }}
{% endmacro %}

{% macro lakeplan_state_mismatch_message(stored, current) %}
    {%- set changes = [] -%}
    {%- if stored.version != current.version -%}
        {%- do changes.append('fingerprint_version ' ~ stored.version ~ ' -> ' ~ current.version) -%}
    {%- endif -%}
    {%- if stored.logic != current.logic -%}{%- do changes.append('its own SQL, columns or configs') -%}{%- endif -%}
    {%- for input in (stored.inputs.keys() | list + current.inputs.keys() | list) | unique | sort
        if stored.inputs.get(input) != current.inputs.get(input) -%}
        {%- do changes.append('input `' ~ input ~ '` (' ~ (stored.inputs.get(input) or 'absent')[:12]
            ~ ' -> ' ~ (current.inputs.get(input) or 'absent')[:12] ~ ')') -%}
    {%- endfor -%}
    {{ return('Model `' ~ model.name ~ '` (' ~ config.get('materialized') ~ ') would reuse a table built by other '
        ~ 'logic: the table records fingerprint ' ~ stored.fingerprint ~ ' (' ~ stored.version ~ '), its logic is now '
        ~ current.fingerprint ~ ' (' ~ current.version ~ ').\nWhat changed: ' ~ (changes | join('; ') or 'unknown')
        ~ '.\nReusing it would mix rows computed by the old logic with rows of the new.') }}
{% endmacro %}

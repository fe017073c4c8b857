{#- `change_mode: delta` (Paimon's sorted runs, Hudi's log blocks): a run appends its collapsed change to the target
    table itself as delta rows (`lakeplan_delta`), and never reads or rewrites its stored rows. Readers read
    `<target>__lakeplan_merged`, which folds each key's delta rows, in commit order, onto its stored row with the
    MERGE's own SQL (lakeplan_partial_update_combined): the rows the MERGE would have stored. One table, so a run,
    a compaction and a rebuild are each one commit, and every record lakeplan keeps on the table holds as it does
    for the MERGE (docs/design/delta_mode.md). -#}

{% macro lakeplan_folded_relation(target) %}
    {{ return(target.incorporate(path={'identifier': target.identifier ~ '__lakeplan_folded'}, type='view')) }}
{% endmacro %}

{% macro lakeplan_merged_relation(target) %}
    {{ return(target.incorporate(path={'identifier': target.identifier ~ '__lakeplan_merged'}, type='view')) }}
{% endmacro %}

{% macro lakeplan_stored_relation(target) %}
    {{ return(target.incorporate(path={'identifier': target.identifier ~ '__lakeplan_base'}, type='view')) }}
{% endmacro %}

{#- A delta row's own columns (NULL on a stored row): that it is one, its write group's place in the run, the
    columns the group wrote, each column's written flag, whether the run deleted the key and whether it is alive
    after. Which run wrote it is its commit's sequence number, Iceberg's own (format 3's row lineage,
    `_last_updated_sequence_number`): numbered at the commit, so the later of two overlapping runs folds last. -#}
{% macro lakeplan_delta_columns(spec) %}
    {%- set keys = spec.unique_key | map('lower') | list -%}
    {%- set columns = [('lakeplan_delta', 'boolean'), ('lakeplan_group', 'int'),
        ('lakeplan_wrote', 'array<string>')] -%}
    {%- for column in spec.columns if column.name | lower not in keys -%}
        {%- do columns.append(('lakeplan_written_' ~ column.name, 'boolean')) -%}
    {%- endfor -%}
    {%- do columns.extend([('lakeplan_deleted', 'boolean'), ('lakeplan_alive', 'boolean')]) -%}
    {{ return(columns) }}
{% endmacro %}

{#- Every column of a target in delta mode, quoted: the declared ones, then the delta's. -#}
{% macro lakeplan_delta_table_columns(spec) %}
    {%- set names = [] -%}
    {%- for column in spec.columns -%}{%- do names.append(lakeplan.lakeplan_quote(column.name)) -%}{%- endfor -%}
    {%- for name, type in lakeplan.lakeplan_delta_columns(spec) -%}
        {%- do names.append(lakeplan.lakeplan_quote(name)) -%}
    {%- endfor -%}
    {{ return(names) }}
{% endmacro %}

{#- A stored row's delta columns, for the rows a CREATE TABLE AS SELECT writes. -#}
{% macro lakeplan_delta_stored_values(spec) %}
    {%- set values = [] -%}
    {%- for name, type in lakeplan.lakeplan_delta_columns(spec) -%}
        {%- do values.append('cast(' ~ ('false' if name == 'lakeplan_delta' else 'null') ~ ' as ' ~ type ~ ') as '
            ~ lakeplan.lakeplan_quote(name)) -%}
    {%- endfor -%}
    {{ return(values) }}
{% endmacro %}

{#- Before a delta run (or after a rebuild): the delta columns the table lacks (`stored_names`: its columns' names),
    format 3 for the row lineage that orders the runs, and the column metrics the overflow check reads
    (lakeplan_delta_metrics_properties) where the table was made without them. Changes of metadata, not of rows. -#}
{% macro lakeplan_delta_table_sql(target, spec, stored_names) %}
    {%- set present = stored_names | map('lower') | list -%}
    {%- set statements, additions = [], [] -%}
    {%- for name, type in lakeplan.lakeplan_delta_columns(spec) if name | lower not in present -%}
        {%- do additions.append(lakeplan.lakeplan_quote(name) ~ ' ' ~ type) -%}
    {%- endfor -%}
    {%- if additions -%}
        {%- do statements.append('alter table ' ~ target ~ ' add columns (' ~ additions | join(', ') ~ ')') -%}
    {%- endif -%}
    {#- as this run first read them (new_rows): only a write of this run's would have changed the format since -#}
    {%- set properties = lakeplan.lakeplan_table_properties(target) -%}
    {%- if properties.get('format-version') != '3' -%}
        {%- do statements.append('alter table ' ~ target ~ " set tblproperties ('format-version' = '3')") -%}
    {%- endif -%}
    {%- set metrics = {} -%}
    {%- for key, value in lakeplan.lakeplan_delta_metrics_properties(stored_names).items() if key not in properties -%}
        {%- do metrics.update({key: value}) -%}
    {%- endfor -%}
    {%- if metrics -%}
        {%- do statements.append('alter table ' ~ target ~ ' set tblproperties ('
            ~ lakeplan.lakeplan_properties_sql(metrics) ~ ')') -%}
    {%- endif -%}
    {{ return(statements) }}
{% endmacro %}

{#- A target in delta mode keeps Iceberg's column metrics (lower and upper bounds in each data file's entry) of
    `lakeplan_delta`, `lakeplan_group` and each arithmetic rule's column, which the overflow check's bound reads:
    Iceberg keeps them for a table's first 100 columns only unless told. `stored_names`: the table's columns' names,
    for their spelling (Iceberg finds a column by its exact name); none: the declared ones (a table being created). -#}
{% macro lakeplan_delta_metrics_properties(stored_names=none) %}
    {#- a snapshot's or a seed's table has no plan -#}
    {%- if ((config.get('lakeplan_plan') or {}).get('change_mode') or {}).get('mode') != 'delta' -%}
        {{ return({}) }}
    {%- endif -%}
    {%- set spec = lakeplan.lakeplan_validate_get_partial_update_spec() -%}
    {%- set properties = {} -%}
    {%- set arithmetic = lakeplan.lakeplan_delta_arithmetic_columns(spec) | map(attribute='name') | list -%}
    {%- for name in ['lakeplan_delta', 'lakeplan_group'] + arithmetic -%}
        {%- set spelled = namespace(name=name) -%}
        {%- for stored in stored_names or [] if stored | lower == name | lower -%}
            {%- set spelled.name = stored -%}
        {%- endfor -%}
        {%- do properties.update({'write.metadata.metrics.column.' ~ spelled.name: 'full'}) -%}
    {%- endfor -%}
    {{ return(properties) }}
{% endmacro %}

{#- A table that was in change_mode delta and is now written in place: its delta rows not folded yet would be
    taken for stored rows (a key twice, its changes not applied), so the write stops before anything is written. -#}
{% macro lakeplan_refuse_unfolded_delta(target, spec) %}
    {%- set delta_rows = run_query('select count(*) from ' ~ target ~ ' where lakeplan_delta')
        .columns[0].values()[0] -%}
    {%- if delta_rows > 0 -%}
        {%- do exceptions.raise_compiler_error(spec.owner ~ ' is now in change_mode '
            ~ lakeplan.lakeplan_plan().change_mode.mode ~ ', but its table ' ~ target ~ ' holds ' ~ delta_rows
            ~ ' delta rows from change_mode delta not folded yet, which an in-place write would take for stored rows; '
            ~ 'nothing was written. Fix: set `change_mode: delta` back with `maintenance: {delta_runs: 1}`, fold them '
            ~ 'with dbt run-operation lakeplan_maintain --args \'{select: ' ~ spec.model ~ '}\' (it writes no new rows), '
            ~ 'then set the new change_mode and remove `delta_runs` (and `maintenance` itself where it held nothing '
            ~ 'else: an empty one turns on the default upkeep); or rebuild it: dbt run --full-refresh -s '
            ~ spec.model ~ '.') -%}
    {%- endif -%}
{% endmacro %}

{#- A target's views of the delta layout, readers first. -#}
{% macro lakeplan_delta_views(target) %}
    {{ return([lakeplan.lakeplan_merged_relation(target), lakeplan.lakeplan_folded_relation(target),
        lakeplan.lakeplan_stored_relation(target)]) }}
{% endmacro %}

{#- Dropping a target's views of the delta layout. `kept_only`: only those the catalog holds (a rebuild in another
    change_mode, which most often has none). -#}
{% macro lakeplan_drop_delta_views_sql(target, kept_only=false) %}
    {%- set statements = [] -%}
    {%- for view in lakeplan.lakeplan_delta_views(target)
            if not kept_only or adapter.get_relation(view.database, view.schema, view.identifier) -%}
        {%- do statements.append('drop view if exists ' ~ view) -%}
    {%- endfor -%}
    {{ return(statements) }}
{% endmacro %}

{#- A table that left change_mode delta with no delta rows (lakeplan_refuse_unfolded_delta): its views and lakeplan's
    columns go (Iceberg drops a dropped column's metrics properties with it), so that `select *` through `ref()`
    shows the declared columns alone. Changes of metadata, not of rows. -#}
{% macro lakeplan_leave_delta_sql(target, spec, stored_names) %}
    {%- set statements = lakeplan.lakeplan_drop_delta_views_sql(target) -%}
    {%- set delta_columns = lakeplan.lakeplan_delta_columns(spec) | map(attribute=0) | map('lower') | list -%}
    {%- set columns = [] -%}
    {#- and the written flags of columns the YAML no longer declares -#}
    {%- for name in stored_names if name | lower in delta_columns or (name | lower).startswith('lakeplan_written_') -%}
        {%- do columns.append(lakeplan.lakeplan_quote(name)) -%}
    {%- endfor -%}
    {%- do statements.append('alter table ' ~ target ~ ' drop columns (' ~ columns | join(', ') ~ ')') -%}
    {{ return(statements) }}
{% endmacro %}

{#- A run's delta rows: each group's collapsed rows, appended in one commit; within a run the groups keep their
    order (in place, they MERGE one after the other). `headroom` (lakeplan_delta_headroom): a bound per checked
    column that each row's value must stay within. -#}
{% macro lakeplan_delta_append_sql(target, write_groups, spec, headroom={}) %}
    {{ return('insert into ' ~ target ~ ' (' ~ lakeplan.lakeplan_delta_table_columns(spec) | join(', ') ~ ')\n'
        ~ lakeplan.lakeplan_delta_run_rows_sql(write_groups, spec, headroom)) }}
{% endmacro %}

{% macro lakeplan_delta_run_rows_sql(write_groups, spec, headroom={}) %}
    {%- set selects = [] -%}
    {%- for write_group in write_groups -%}
        {%- set layout = lakeplan.lakeplan_partial_update_layout(write_group, spec) -%}
        {%- do selects.append(lakeplan.lakeplan_delta_rows_sql(lakeplan.lakeplan_partial_update_source(
            write_group, spec, layout), write_group, spec, layout, loop.index, headroom)) -%}
    {%- endfor -%}
    {{ return(selects | join('\nunion all\n')) }}
{% endmacro %}

{% macro lakeplan_delta_rows_sql(source, write_group, spec, layout, position, headroom={}) %}
    {%- set wrote = [] -%}
    {%- for column in spec.columns if lakeplan.lakeplan_partial_update_changes(column, write_group.written, spec) -%}
        {%- do wrote.append(lakeplan.lakeplan_string_literal(column.name | lower)) -%}
    {%- endfor -%}
    {%- set keys = spec.unique_key | map('lower') | list -%}
    {%- set values = [] -%}
    {%- for column in spec.columns -%}
        {%- set value = 'lakeplan_change.' ~ lakeplan.lakeplan_quote(column.name) -%}
        {%- set room = headroom.get(column.name | lower) if column.name | lower in write_group.written else none -%}
        {%- do values.append(value if room is none else 'if(' ~ value ~ ' > ' ~ room ~ ' or ' ~ value ~ ' < -' ~ room
            ~ ', raise_error(' ~ lakeplan.lakeplan_string_literal(lakeplan.lakeplan_delta_bound_crossed(spec)) ~ '), '
            ~ value ~ ')') -%}
    {%- endfor -%}
    {%- do values.extend(['true', position | string, 'array(' ~ wrote | join(', ') ~ ')']) -%}
    {%- for column in spec.columns if column.name | lower not in keys -%}
        {%- set name = column.name | lower -%}
        {%- set rule = spec.merge_rules[spec.rules[name]] if name in spec.rules else none -%}
        {#- the collapse says whether a written NULL overwrites where the rule asks (its written flag) -#}
        {%- set flagged = rule and rule.null_overwrites and name not in layout.packed
            and spec.grouped.get(name) not in write_group.written -%}
        {%- do values.append('lakeplan_change.' ~ lakeplan.lakeplan_quote('lakeplan_written_' ~ column.name) if flagged
            else (name in write_group.written) | string | lower) -%}
    {%- endfor -%}
    {%- do values.extend(['lakeplan_change.lakeplan_deleted', 'lakeplan_change.lakeplan_alive']) -%}
    {%- set named = [] -%}
    {%- for name in lakeplan.lakeplan_delta_table_columns(spec) -%}
        {%- do named.append(values[loop.index0] ~ ' as ' ~ name) -%}
    {%- endfor -%}
    {{ return('select ' ~ named | join(',\n    ') ~ '\nfrom ' ~ source ~ ' as lakeplan_change') }}
{% endmacro %}

{#- Overflow in delta mode. The in-place MERGE refuses a `sum`, `count` or `product` that its column cannot hold as
    it meets the stored value; a delta write meets no stored row, and a change that overflowed once folded would fail
    every read of the merged view after it. So a write that changes such a column checks its change as the fold will
    meet it, in one of two ways:
    - without reading a row, where the rule adds up what it folds (`sum`, `count`): Iceberg's column metrics bound
      the values of the files of stored rows and of delta rows, so a key's merged value before this run is at most
      the largest stored value plus the largest delta value once per run and write group not folded yet, and each
      row of this run only has to stay within what is left of the column's range (`lakeplan_delta_headroom`), which
      the append checks as it writes;
    - exactly, where that cannot tell (a `product`, files without metrics, a bound past the range, a row past what is
      left): a statement before the append folds the change onto the stored and delta rows of those columns, and
      fails, naming the key, where the MERGE would (`lakeplan_delta_overflow_check_sql`). It reads those columns of
      every stored row: the write then costs a narrow read of the table. -#}
{% macro lakeplan_delta_write(target, write_groups, spec, commit, stored_names) %}
    {%- set checked = lakeplan.lakeplan_delta_checked_columns(write_groups, spec) -%}
    {%- set step = {'name': 'main', 'sql': commit ~ lakeplan.lakeplan_delta_append_sql(target, write_groups, spec)} -%}
    {%- if not checked -%}{{ return(step) }}{%- endif -%}
    {%- do step.update({'check': lakeplan.lakeplan_delta_overflow_check_sql(target, write_groups, spec, checked),
        'bound_crossed': lakeplan.lakeplan_delta_bound_crossed(spec)}) -%}
    {%- set headroom = lakeplan.lakeplan_delta_headroom(target, spec, checked, write_groups, stored_names) -%}
    {%- if none not in headroom.values() -%}
        {%- do step.update({'guarded': commit ~ lakeplan.lakeplan_delta_append_sql(target, write_groups, spec,
            headroom)}) -%}
    {%- endif -%}
    {{ return(step) }}
{% endmacro %}

{#- What the append raises where a row is past its headroom (the write then checks exactly; never shown). -#}
{% macro lakeplan_delta_bound_crossed(spec) %}
    {{ return('lakeplan: a change of `' ~ spec.model ~ '` is past the bound its column metrics allow') }}
{% endmacro %}

{#- The columns whose values a fold can carry past their type: an arithmetic rule's, outside sequence groups (a
    group's accepted row replaces its values). -#}
{% macro lakeplan_delta_arithmetic_columns(spec) %}
    {%- set keys = spec.unique_key | map('lower') | list -%}
    {%- set columns = [] -%}
    {%- for column in spec.columns -%}
        {%- set name = column.name | lower -%}
        {%- set rule = spec.merge_rules[spec.rules[name]] if name in spec.rules else none -%}
        {%- if rule and rule.arithmetic and name not in keys and not spec.grouped.get(name) -%}
            {%- do columns.append(column) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(columns) }}
{% endmacro %}

{#- Those of them a group of this run writes: what its write checks. -#}
{% macro lakeplan_delta_checked_columns(write_groups, spec) %}
    {%- set checked = [] -%}
    {%- for column in lakeplan.lakeplan_delta_arithmetic_columns(spec)
            if lakeplan.lakeplan_delta_writers(write_groups, column.name | lower) -%}
        {%- do checked.append(column) -%}
    {%- endfor -%}
    {{ return(checked) }}
{% endmacro %}

{#- Each checked column (lower-case name) -> what is left of its range for one row of this run (SQL), or none where
    the bound cannot tell. A key's merged value before this run is at most its stored value plus its delta rows, each
    bounded by the metrics of the files holding such rows; a key has at most one delta row per run and write group
    (runs: the delta files' commits; groups: `lakeplan_group`'s bound), and at most the table's delta rows. From the
    live data files' entries, in one read of the table's `entries`: a file without `lakeplan_delta`'s metrics (written
    before the table had it) counts as either. A column the table does not have yet (`stored_names`: the columns it
    has; this write adds the others first) holds no value, nor a table without `lakeplan_delta` delta rows. -#}
{% macro lakeplan_delta_headroom(target, spec, checked, write_groups, stored_names) %}
    {%- set present = stored_names | map('lower') | list -%}
    {%- set entered = 'lakeplan_delta' in present -%}
    {%- set kinds = {'stored': 'readable_metrics.lakeplan_delta.lower_bound is distinct from true',
                     'delta': 'readable_metrics.lakeplan_delta.upper_bound is distinct from false'}
        if entered else {'stored': 'true', 'delta': 'false'} -%}
    {%- set metrics = [] -%}
    {%- for column in checked -%}
        {%- set field = 'readable_metrics.' ~ lakeplan.lakeplan_quote(column.name) -%}
        {%- set held = column.name | lower in present -%}
        {%- for kind in ['stored', 'delta'] -%}
            {%- do metrics.extend(['min(if(' ~ kinds[kind] ~ ', ' ~ field ~ '.lower_bound, null))',
                'max(if(' ~ kinds[kind] ~ ', ' ~ field ~ '.upper_bound, null))'] if held else ['null', 'null']) -%}
        {%- endfor -%}
        {%- do metrics.append('count_if(' ~ field ~ '.upper_bound is null and coalesce(' ~ field ~ '.value_count > '
            ~ field ~ '.null_value_count, true))' if held else '0') -%}
    {%- endfor -%}
    {%- set group = 'readable_metrics.lakeplan_group.upper_bound' -%}
    {%- do metrics.extend(['coalesce(sum(if(' ~ kinds.delta ~ ', data_file.record_count, 0)), 0)',
        'count(distinct if(' ~ kinds.delta ~ ', sequence_number, null))', 'max(if(' ~ kinds.delta ~ ', ' ~ group
        ~ ', null))', 'count_if(' ~ kinds.delta ~ ' and ' ~ group ~ ' is null)'] if entered else ['0'] * 4) -%}
    {%- set found = run_query('select ' ~ metrics | join(', ') ~ ' from ' ~ target
        ~ '.entries where status < 2 and data_file.content = 0').rows[0] -%}
    {%- set delta_rows, runs, groups, groups_unknown = found[-4:] -%}
    {%- set key_rows = delta_rows if groups_unknown else [delta_rows, runs * (groups or 0)] | min -%}
    {%- set headroom = {} -%}
    {%- for column in checked -%}
        {%- set name = column.name | lower -%}
        {%- set stored_low, stored_high, delta_low, delta_high, unknown = found[loop.index0 * 5:loop.index0 * 5 + 5] -%}
        {%- set largest = lakeplan.lakeplan_largest(column.data_type) -%}
        {%- set room = none -%}
        {%- if spec.merge_rules[spec.rules[name]].arithmetic.additive and largest is not none and unknown == 0 -%}
            {%- set stored = [(stored_low or 0) | abs, (stored_high or 0) | abs] | max -%}
            {%- set delta = [(delta_low or 0) | abs, (delta_high or 0) | abs] | max -%}
            {#- this run's groups that write the column each add a row of the key -#}
            {%- set writers = lakeplan.lakeplan_delta_writers(write_groups, name) -%}
            {%- if largest is float -%}
                {%- set left = (largest - (stored | float) - (key_rows | int) * (delta | float)) / writers -%}
                {%- set room = 'cast(' ~ lakeplan.lakeplan_string_literal(left | string) ~ ' as double)'
                    if left >= 0 else none -%}
            {%- else -%}
                {%- set left = (largest - stored - (key_rows | int) * delta) // writers -%}
                {%- set room = '%d' | format(left) if left >= 0 else none -%}
            {%- endif -%}
        {%- endif -%}
        {%- do headroom.update({name: room}) -%}
    {%- endfor -%}
    {{ return(headroom) }}
{% endmacro %}

{#- How many of this run's write groups write `name` (lower case). -#}
{% macro lakeplan_delta_writers(write_groups, name) %}
    {%- set writers = [] -%}
    {%- for write_group in write_groups if name in write_group.written -%}
        {%- do writers.append(loop.index) -%}
    {%- endfor -%}
    {{ return(writers | length) }}
{% endmacro %}

{#- The largest magnitude a number type holds (a decimal's integer part: the bound needs no more); none for others. -#}
{% macro lakeplan_largest(data_type) %}
    {%- set type = lakeplan.lakeplan_normal_type(data_type) -%}
    {%- set decimal = lakeplan.lakeplan_decimal(type) -%}
    {%- if decimal -%}{{ return(10 ** (decimal.precision - decimal.scale) - 1) }}{%- endif -%}
    {{ return(lakeplan.lakeplan_types().largest.get(type)) }}
{% endmacro %}

{#- SQL that fails where the change, folded onto the stored and delta rows of the `checked` columns (this run's rows
    last), leaves a column's type: the fold's own combine raises, naming the key, as the MERGE's does. -#}
{% macro lakeplan_delta_overflow_check_sql(target, write_groups, spec, checked) %}
    {%- set keys = spec.unique_key | map('lower') | list -%}
    {%- set checked_names = checked | map(attribute='name') | map('lower') | list -%}
    {%- set narrow = {} -%}
    {%- do narrow.update(spec) -%}
    {%- set columns = [] -%}
    {%- for column in spec.columns if column.name | lower in keys + checked_names -%}
        {%- do columns.append(column) -%}
    {%- endfor -%}
    {%- do narrow.update({'columns': columns}) -%}
    {%- set names = lakeplan.lakeplan_delta_table_columns(narrow) | join(', ') -%}
    {%- set rows = 'select ' ~ names ~ ', _last_updated_sequence_number as lakeplan_run from ' ~ target
        ~ ' where lakeplan_delta\n    union all\n    select ' ~ names ~ ', 9223372036854775807 as lakeplan_run from (\n'
        ~ lakeplan.lakeplan_delta_run_rows_sql(write_groups, spec) ~ '\n) as lakeplan_this_run' -%}
    {%- set stored = '(select ' ~ lakeplan.lakeplan_quote_list(narrow.columns | map(attribute='name') | list)
        ~ ' from ' ~ target ~ ' where not coalesce(lakeplan_delta, false))' -%}
    {%- set folded = lakeplan.lakeplan_delta_folded_sql(target, narrow, stored, rows) -%}
    {#- its label: `dbt compile` and target/run/ show it before the append -#}
    {{ return('-- lakeplan: checks that this run\'s change, folded onto the stored and delta rows of '
        ~ checked_names | join(', ') ~ ', stays within their types; the append follows only if it does\n'
        ~ 'select count(lakeplan_merged) from (\n' ~ folded ~ '\n) as lakeplan_folded\nwhere lakeplan_changed') }}
{% endmacro %}

{#- SQL: whether a delta row's write group wrote `column` (the MERGE updates only those columns). Where its written
    flag is the group's (lakeplan_delta_rows_sql: outside sequence groups, under a rule that lets no written NULL
    overwrite), that one field; else the name looked up in `lakeplan_wrote`, a scan of every written column's name
    for each column and delta row (at 120 columns, most of the fold's time). -#}
{% macro lakeplan_delta_wrote(column, spec) %}
    {%- set name = column.name | lower -%}
    {%- set rule = spec.merge_rules[spec.rules[name]] if name in spec.rules else none -%}
    {%- if not spec.grouped.get(name) and not (rule and rule.null_overwrites) -%}
        {{ return('lakeplan_change.' ~ lakeplan.lakeplan_quote('lakeplan_written_' ~ column.name)) }}
    {%- endif -%}
    {{ return('array_contains(lakeplan_change.lakeplan_wrote, ' ~ lakeplan.lakeplan_string_literal(name) ~ ')') }}
{% endmacro %}

{#- A delta row's declared columns as the fold carries a key's row (`row`: the alias they are read from): where a
    delete, or a key the stored rows lack, makes the row start anew from the change. -#}
{% macro lakeplan_delta_row(spec, row) %}
    {%- set fields = [] -%}
    {%- for column in spec.columns -%}
        {%- do fields.append(lakeplan.lakeplan_string_literal(column.name) ~ ', ' ~ row ~ '.'
            ~ lakeplan.lakeplan_quote(column.name)) -%}
    {%- endfor -%}
    {{ return('named_struct(' ~ fields | join(', ') ~ ')') }}
{% endmacro %}

{#- One step of the fold: the key's row (`lakeplan_table`) after one delta row (`lakeplan_change`, the table's row
    with its run), as the MERGE (lakeplan_partial_update_merge_sql) treats a matched and an unmatched key. -#}
{% macro lakeplan_delta_fold_step(spec) %}
    {%- set fields = [] -%}
    {%- for column in spec.columns -%}
        {%- set name = lakeplan.lakeplan_quote(column.name) -%}
        {%- set value = 'lakeplan_table.' ~ name -%}
        {%- if column.name | lower not in spec.unique_key | map('lower') | list -%}
            {%- set value = 'if(' ~ lakeplan.lakeplan_delta_wrote(column, spec) ~ ', '
                ~ lakeplan.lakeplan_partial_update_combined(column, spec) ~ ', ' ~ value ~ ')' -%}
        {%- endif -%}
        {%- do fields.append(lakeplan.lakeplan_string_literal(column.name) ~ ', cast(' ~ value ~ ' as '
            ~ column.data_type ~ ')') -%}
    {%- endfor -%}
    {{ return('case when lakeplan_change.lakeplan_deleted and not lakeplan_change.lakeplan_alive then null'
        ~ ' when lakeplan_change.lakeplan_deleted or lakeplan_table is null and lakeplan_change.lakeplan_alive then '
        ~ lakeplan.lakeplan_delta_row(spec, 'lakeplan_change')
        ~ ' when lakeplan_table is not null then named_struct(' ~ fields | join(', ') ~ ') else lakeplan_table end') }}
{% endmacro %}

{#- The merged table, in two steps (two views: the embedded catalog keeps at most 32,700 characters of each, and a
    wide target's fold and projection together pass that). `lakeplan_delta_folded_sql`: the stored rows read once,
    each joined with its key's delta rows (in commit order, a run's groups in their order) where it has any and
    those folded onto it (`lakeplan_merged`, NULL where the fold deleted the key), plus the keys only the delta has.
    The delta rows are the build side of a hash join (few: the runs since the last compaction), so a table bucketed
    by the key joins them bucket by bucket with no shuffle. `stored` and `rows` (SQL: the stored rows, the delta
    rows with their `lakeplan_run`) are the table's unless given (the overflow check's narrow ones).
    `lakeplan_delta_merged_sql` (`folded`: that step, a view or a subquery): each column, where a stored row without
    delta rows passes by the fold column by column (no struct of it is built). -#}
{% macro lakeplan_delta_folded_sql(target, spec, stored=none, rows=none) %}
    {%- set in_order = '(l, r) -> case when l.lakeplan_run < r.lakeplan_run or l.lakeplan_run = r.lakeplan_run and '
        ~ 'l.lakeplan_group < r.lakeplan_group then -1 when l.lakeplan_run = r.lakeplan_run and l.lakeplan_group = '
        ~ 'r.lakeplan_group then 0 else 1 end' -%}
    {%- set keys = lakeplan.lakeplan_quote_list(spec.unique_key) -%}
    {%- set same_key = [] -%}
    {%- for key in spec.unique_key -%}
        {%- do same_key.append('lakeplan_stored.' ~ lakeplan.lakeplan_quote(key) ~ ' = lakeplan_changes.'
            ~ lakeplan.lakeplan_quote(key)) -%}
    {%- endfor -%}
    {#- a stored row is there where its key is: the join is on the key, and a key is never NULL -#}
    {{ return('select /*+ SHUFFLE_HASH(lakeplan_changes) */ lakeplan_stored.*, lakeplan_changes.lakeplan_changes is '
        ~ 'not null as lakeplan_changed,\n    aggregate(lakeplan_changes.lakeplan_changes, case when lakeplan_stored.'
        ~ lakeplan.lakeplan_quote(spec.unique_key[0]) ~ ' is not null then struct(lakeplan_stored.*) end, '
        ~ '(lakeplan_table, lakeplan_change) -> ' ~ lakeplan.lakeplan_delta_fold_step(spec) ~ ') as lakeplan_merged\n'
        ~ 'from ' ~ (stored or lakeplan.lakeplan_stored_relation(target)) ~ ' as lakeplan_stored\nfull outer join (\n'
        ~ '    select ' ~ keys ~ ', array_sort(collect_list(struct(lakeplan_rows.*)), ' ~ in_order
        ~ ') as lakeplan_changes\n    from (' ~ (rows or 'select *, _last_updated_sequence_number as lakeplan_run from '
        ~ target ~ ' where lakeplan_delta') ~ ') as lakeplan_rows\n    group by ' ~ keys ~ '\n) as lakeplan_changes on '
        ~ same_key | join(' and ')) }}
{% endmacro %}

{% macro lakeplan_delta_merged_sql(spec, folded) %}
    {%- set columns = [] -%}
    {%- for column in spec.columns -%}
        {%- set name = lakeplan.lakeplan_quote(column.name) -%}
        {%- do columns.append('if(lakeplan_changed, lakeplan_merged.' ~ name ~ ', ' ~ name ~ ') as ' ~ name) -%}
    {%- endfor -%}
    {{ return('select ' ~ columns | join(', ') ~ '\nfrom ' ~ folded
        ~ ' as lakeplan_folded\nwhere not lakeplan_changed or lakeplan_merged is not null') }}
{% endmacro %}

{#- The views of a target in delta mode: the merged table (and its fold), and the stored rows alone (Hudi's
    read-optimized view: for other engines, and readers that accept the lag until the next compaction). Made where
    missing, where the target's columns changed their SQL or their types (a view keeps the types it was made with:
    a widened column read through it fails to cast back), and after the view they read; dropped first (Iceberg's
    view catalog keeps the first SQL of a CREATE OR REPLACE). A write that leaves them alone leaves a reader no moment
    without them, also if it is killed. -#}
{% macro lakeplan_delta_views_sql(target, spec) %}
    {%- set stored, folded = lakeplan.lakeplan_stored_relation(target), lakeplan.lakeplan_folded_relation(target) -%}
    {%- set declared = [] -%}
    {%- for column in spec.columns -%}
        {%- do declared.append((column.name | lower, lakeplan.lakeplan_iceberg_type(column.data_type))) -%}
    {%- endfor -%}
    {#- each view after the one it reads; the declared columns' types as the table stores them, where the view shows
        them (a declared varchar(n) compared as such made the views again at every write) -#}
    {%- set views = [
        (stored, 'select ' ~ lakeplan.lakeplan_quote_list(spec.columns | map(attribute='name') | list) ~ ' from '
            ~ target ~ ' where not coalesce(lakeplan_delta, false)', declared),
        (folded, lakeplan.lakeplan_delta_folded_sql(target, spec), none),
        (lakeplan.lakeplan_merged_relation(target), lakeplan.lakeplan_delta_merged_sql(spec, folded), declared)] -%}
    {%- for view, sql, types in views -%}{%- do lakeplan.lakeplan_check_view_text(sql, view, spec) -%}{%- endfor -%}
    {%- set statements = [] -%}
    {%- for view, sql, types in views -%}
        {%- set kept = lakeplan.lakeplan_stored_view(view) -%}
        {%- if statements or kept is none or kept.text != sql or types is not none and kept.types != types -%}
            {%- do statements.extend(['drop view if exists ' ~ view, 'create view ' ~ view ~ ' as\n' ~ sql]) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(statements) }}
{% endmacro %}

{#- A view as the catalog keeps it: its SQL and its columns' (lower-case name, type); none where there is no such
    view. -#}
{% macro lakeplan_stored_view(view) %}
    {%- if not execute or not adapter.get_relation(view.database, view.schema, view.identifier) -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set kept = {'text': none, 'types': []} -%}
    {%- set columns = namespace(done=false) -%}
    {%- for row in run_query('describe table extended ' ~ view) -%}
        {%- if not row[0] or row[0].startswith('#') -%}{%- set columns.done = true -%}{%- endif -%}
        {%- if not columns.done -%}
            {%- do kept.types.append((row[0] | lower, lakeplan.lakeplan_normal_type(row[1]))) -%}
        {%- elif row[0] == 'View Text' -%}
            {%- do kept.update({'text': row[1]}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(kept) }}
{% endmacro %}

{#- Compaction: the table rewritten as its merged rows, stored, in one `insert overwrite` (one commit: a reader sees
    every run folded or none; a compaction that fails or is killed commits nothing). Its `lakeplan_applied_*` tags
    stay in the table's history, so a rerun of the same inputs is still known as one. -#}
{% macro lakeplan_delta_compact_sql(target, spec) %}
    {%- set stored = lakeplan.lakeplan_quote_list(spec.columns | map(attribute='name') | list)
        ~ ', ' ~ lakeplan.lakeplan_delta_stored_values(spec) | join(', ') -%}
    {{ return('insert overwrite ' ~ target ~ ' (' ~ lakeplan.lakeplan_delta_table_columns(spec) | join(', ')
        ~ ')\nselect ' ~ stored
        ~ '\nfrom (\n' ~ lakeplan.lakeplan_delta_merged_sql(spec, '(\n' ~ lakeplan.lakeplan_delta_folded_sql(target, spec)
            ~ '\n)') ~ '\n) as lakeplan_merged_rows') }}
{% endmacro %}

{#- The delta rows a target's table holds and the runs they came from ({rows, runs}), from its data files' entries:
    metadata, so that what a write costs does not grow with the table (counting them over the rows read a column of
    every row, 0.7 s at 1M keys). A run appends files of delta rows only and a fold writes stored rows only; a file
    written before the table had `lakeplan_delta` holds stored rows (no value). Where the entries cannot tell (a file
    without that column's bounds, or holding both kinds) or rows may be deleted (a delete file), they are counted
    over the rows. A run's files share its commit's sequence number, which is its rows' `_last_updated_sequence_number`
    (row lineage), the fold's order. -#}
{% macro lakeplan_delta_size(relation) %}
    {%- set flag = 'readable_metrics.lakeplan_delta' -%}
    {%- set found = run_query('select coalesce(sum(if(' ~ flag ~ '.upper_bound, data_file.record_count, 0)), 0), '
        ~ 'count(distinct if(' ~ flag ~ '.upper_bound, sequence_number, null)), count_if(data_file.content != 0 or '
        ~ flag ~ '.upper_bound is null and ' ~ flag ~ '.value_count > ' ~ flag ~ '.null_value_count or '
        ~ flag ~ '.lower_bound != ' ~ flag ~ '.upper_bound) from ' ~ relation ~ '.entries where status < 2').rows[0] -%}
    {%- if found[2] -%}
        {%- set found = run_query('select count(*), count(distinct _last_updated_sequence_number) from ' ~ relation
            ~ ' where lakeplan_delta').rows[0] -%}
    {%- endif -%}
    {{ return({'rows': found[0] | int, 'runs': found[1] | int}) }}
{% endmacro %}

{#- Whether a target's table has the delta's columns: not yet where it was built in another change_mode and its model
    has not run in delta mode since (none: no table). -#}
{% macro lakeplan_in_delta_layout(relation) %}
    {%- if relation is none or relation.is_view -%}{{ return(false) }}{%- endif -%}
    {{ return('lakeplan_delta' in adapter.get_columns_in_relation(relation) | map(attribute='name') | map('lower')) }}
{% endmacro %}

{#- Compaction of a target in delta mode (`node`: its graph node; none: the model being run), once its delta rows
    hold `maintenance.delta_runs` runs: after each write, and from `lakeplan_maintain`. Logs what it folded; returns
    the failure's sentence (none when nothing failed), for the caller to report. -#}
{% macro lakeplan_delta_fold(relation, node=none) %}
    {%- set change_mode = lakeplan.lakeplan_plan(node).change_mode -%}
    {%- set name = (node or model).name -%}
    {%- set runs = lakeplan.lakeplan_delta_size(relation).runs -%}
    {%- set said = runs ~ (' run' if runs == 1 else ' runs') ~ ' of delta rows' -%}
    {%- if runs < change_mode.delta_runs -%}
        {%- do log('lakeplan: `' ~ name ~ '` holds ' ~ said ~ ' (maintenance.delta_runs '
            ~ change_mode.delta_runs ~ '): not folded yet.', info=node is not none) -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set spec = lakeplan.lakeplan_validate_get_partial_update_spec(node) -%}
    {#- a write stopped between its pending record of what it consumed and its commit would be taken as committed
        once the fold (an overwrite, not a compaction's `replace`) follows it: its rows never applied. Settled
        first, as before snapshot expiry. -#}
    {%- do lakeplan.lakeplan_settle_consumed(relation) -%}
    {%- set result = adapter.lakeplan_attempt(lakeplan.lakeplan_delta_compact_sql(relation, spec)) -%}
    {%- if result.error -%}{{ return('folding its delta rows failed: ' ~ result.error.rstrip('.') ~ '.') }}{%- endif -%}
    {%- do log('lakeplan: `' ~ name ~ '` folded ' ~ said ~ ' into its stored rows '
        ~ '(maintenance.delta_runs ' ~ change_mode.delta_runs ~ ').', info=true) -%}
    {{ return(none) }}
{% endmacro %}

{#- After a write in delta mode, unless `maintenance.after_write` is false (then `lakeplan_maintain` folds). The
    write has committed: a compaction that fails is the upkeep's, told as a warning. -#}
{% macro lakeplan_delta_compact_after_write(target) %}
    {%- set change_mode = lakeplan.lakeplan_plan().change_mode -%}
    {%- if change_mode.mode != 'delta' or not change_mode.delta_after_write or lakeplan.lakeplan_empty_run() -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set failed = lakeplan.lakeplan_delta_fold(target) -%}
    {%- if failed -%}
        {%- do exceptions.warn('lakeplan: `' ~ model.name ~ '` wrote its change, and then ' ~ failed ~ ' Its delta '
            ~ 'rows stay and are read merged. Fix: correct the cause; the next write folds them again.') -%}
    {%- endif -%}
{% endmacro %}

{#- The embedded catalog (Derby, the `local` target's) keeps a view's SQL in a column of at most 32,700 characters, and
    a longer one fails the CREATE VIEW after the write committed: so a target whose merged view would not fit is
    stopped before anything is written. A metastore in PostgreSQL (the `team` target) keeps any length. Derby is the
    metastore where Spark names no JDBC driver for it (lakeplan's settings name one only for the shared catalog; its
    URL Spark's SET shows redacted). -#}
{% macro lakeplan_check_view_text(sql, view, spec) %}
    {%- set limit = 32700 -%}
    {%- if sql | length <= limit -%}{{ return(none) }}{%- endif -%}
    {%- set driver = run_query('set spark.hadoop.javax.jdo.option.ConnectionDriverName').columns[1].values()[0] -%}
    {%- if driver == '<undefined>' or 'derby' in driver | lower -%}
        {%- do exceptions.raise_compiler_error(spec.owner ~ ' is in change_mode delta over ' ~ spec.columns | length
            ~ ' columns, and its view ' ~ view ~ ' (of the merged rows) would be ' ~ sql | length
            ~ ' characters of SQL, more than '
            ~ 'the embedded catalog (Derby) keeps for a view (' ~ limit ~ '); nothing was written. Fix: run it on '
            ~ 'the shared catalog (target team, docs/team.md), whose PostgreSQL keeps any length, or set another '
            ~ 'change_mode on `' ~ spec.model ~ '`.') -%}
    {%- endif -%}
{% endmacro %}

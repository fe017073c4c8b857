-- keyed_by writes an Iceberg table bucketed by the key into key_groups buckets.
{% set relation = ref('payments_by_account') %}
{% set layout = lakeplan.lakeplan_table_layout(relation) if execute else {} %}
select 1 as wrong_layout
where {{ 'true' if execute and (layout.bucketed_by != ['account_id'] or layout.buckets != 4) else 'false' }}

{{ lakeplan.partial_update_target() }}

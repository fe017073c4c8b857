{{ partial_update_target() }}

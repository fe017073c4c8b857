"""`lakeplan.<macro>(...)` for sqlfluff's jinja templater. dbt lets a model call a lakeplan macro through its package's
name as well (`lakeplan.new_rows(ref('orders'))`, as the docs write it); sqlfluff looks such a name up in the modules of
its `library_path` (.sqlfluff), this one. Each public macro renders as its stub in .sqlfluff does
(scripts/sqlfluff_macros.py, which reads them from macros/)."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("lakeplan_sqlfluff_macros",
                                               Path(__file__).resolve().parents[1] / "sqlfluff_macros.py")
_macros = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_macros)


def _stand_in(rendering: str):
    return lambda *args, **kwargs: rendering


globals().update({name: _stand_in(_macros.rendering(name, kind)) for name, (_, kind) in _macros.public_macros().items()})

"""sqlfluff lints a user's model that calls any public lakeplan macro, from stubs generated out of macros/."""

import importlib.util

import pytest
import sqlfluff

from tests.conftest import REPO

spec = importlib.util.spec_from_file_location("sqlfluff_macros", REPO / "scripts" / "sqlfluff_macros.py")
sqlfluff_macros = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sqlfluff_macros)
PUBLIC = sqlfluff_macros.public_macros()


def test_the_committed_stubs_are_the_generated_ones():
    config = (REPO / ".sqlfluff").read_text()
    assert config == sqlfluff_macros.rendered_config(config), "run `python scripts/sqlfluff_macros.py`"
    assert {"datagen", "datagen_changelog", "scan_source", "partial_update_target", "partial_update_target_relation"} <= set(PUBLIC)


def user_model(call: str, signature: str, kind: str) -> str:
    """A model that calls a macro where the docs use it: the whole model, `key in (...)`, or FROM / JOIN."""
    required = [part for part in signature.split(",") if part.strip() and "=" not in part]
    call = f"{call}({', '.join(repr('x') for _ in required)})"
    if kind == "model":
        return f"{{{{ {call} }}}}\n"
    if kind == "subquery":
        return f"select src.id\nfrom {{{{ ref('x') }}}} as src\nwhere src.id in {{{{ {call} }}}}\n"
    return f"select\n    src.id,\n    other.id as other_id\nfrom {{{{ {call} }}}} as src\nleft join {{{{ {call} }}}} as other on src.id = other.id\n"


# dbt takes both `new_rows(...)` and `lakeplan.new_rows(...)` (through the package's name, as the docs write it)
@pytest.mark.parametrize("call", ["{}", "lakeplan.{}"])
@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_a_user_model_calling_a_public_macro_lints_clean(name, call, monkeypatch):
    monkeypatch.chdir(REPO)  # sqlfluff reads .sqlfluff from the working directory up
    violations = sqlfluff.lint(user_model(call.format(name), *PUBLIC[name]), config_path=str(REPO / ".sqlfluff"))
    assert violations == [], f"{call.format(name)}: {violations}"

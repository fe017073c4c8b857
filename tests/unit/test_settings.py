"""The settings declarations: each one complete, the docs generated from them, fingerprints counting exactly
the settings that change contents, and problems that name the owner, the setting, the value and the fix."""

import importlib.util
import re

import pytest

from dbt_lakeplan import manifest_fingerprints
from dbt_lakeplan.settings import SCHEMAS, beside_meta, changes_contents, read_settings
from tests.conftest import REPO

spec = importlib.util.spec_from_file_location("settings_doc", REPO / "scripts" / "settings_doc.py")
settings_doc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(settings_doc)

DECLARED = [(place, name) for place, schema in SCHEMAS.items() for name in schema.model_fields]


@pytest.mark.parametrize("place, name", DECLARED)
def test_every_setting_declares_its_meaning_its_effect_and_a_valid_example(place, name):
    field = SCHEMAS[place].model_fields[name]
    assert field.description and isinstance(field.json_schema_extra["changes_contents"], bool)
    example = field.json_schema_extra["example"]
    assert example != field.default
    settings, found = read_settings(place, "x", {name: example})
    value = getattr(settings, name)
    value = value.model_dump(exclude_none=True, exclude_unset=True) if hasattr(value, "model_dump") else value
    assert found == [] and value == ([example] if isinstance(example, str) and "list[" in str(field.annotation) else example)


@pytest.mark.parametrize("place, name", [(p, n) for p, n in DECLARED if p in ("model", "source")])
def test_fingerprints_count_exactly_the_settings_that_change_contents(place, name):
    counted = manifest_fingerprints.RESULT_CONFIGS if place == "model" else manifest_fingerprints.RESULT_SOURCE_META
    assert (name in counted) == changes_contents(place, name)


def test_the_settings_reference_is_generated_from_the_declarations():
    assert (REPO / "docs" / "settings.md").read_text() == settings_doc.document(), "run `python scripts/settings_doc.py`"


@pytest.mark.parametrize(
    "place, raw, fragments",
    [
        ("model", {"parallelism": 0}, ["model `m` sets `parallelism: 0`", "greater than or equal to 1", "Fix: e.g. `parallelism: 4`"]),
        ("model", {"parallelism": "abc"}, ["model `m` sets `parallelism: 'abc'`", "Fix: e.g. `parallelism: 4`"]),
        ("model", {"parallelism": True}, ["model `m` sets `parallelism: True`"]),
        # beyond a Java int, and beyond the 64 bits dbt's manifest can store
        ("model", {"parallelism": 2**31}, ["`parallelism: 2147483648`", "less than or equal to 2147483647"]),
        ("model", {"full_rewrite_max_mib": 2**70}, ["`full_rewrite_max_mib: 1180591620717411303424`"]),
        ("model", {"static_partition": "day=1"}, ["`static_partition: 'day=1'`", "Fix: e.g. `static_partition:"]),
        ("model", {"write_options": {"spark.sql.x; drop table t": 1}}, ["`write_options:", "string should match pattern"]),
        ("model", {"write_options": {"spark.sql.shuffle.partitions": "4;"}}, ["`write_options:"]),
        ("model", {"write_mode": "upsert"}, ["`write_mode: 'upsert'`", "Fix: one of `merge`, `overwrite`"]),
        ("model", {"scan_parallelism": 4}, ["`scan_parallelism`", "lakeplan setting of the source table `meta:`"]),
        ("model", {"scan_paralelism": 4}, ["did you mean `scan_parallelism`, a setting of the source table `meta:`?"]),
        ("model", {"partial_update_taget": "x"}, ["did you mean `partial_update_target`?"]),
        ("model", {"sequence_group": {"v": ["a"]}}, ["did you mean `sequence_groups`?"]),
        ("model", {"sequnce_by": "v"}, ["did you mean `sequence_by`?"]),
        ("source", {"scan_paralelism": 4}, ["did you mean `scan_parallelism`?"]),
        ("source", {"changelog_mode": "cdc"}, ["`changelog_mode: 'cdc'`", "Fix: one of `insert_only`, `upsert`, `all`"]),
        ("column", {"merg": "sum"}, ["did you mean `merge`?"]),
        # a new-user trial: `merge_rule: sum` passed in silence and the column merged by last_non_null
        ("column", {"merge_rule": "sum"}, ["sets `merge_rule: 'sum'`", "did you mean `merge: sum`?"]),
        ("column", {"aggregate-function": "max"}, ["Paimon's name", "did you mean `merge: max`?"]),
        ("column", {"rule": "last_non_null"}, ["`last_non_null` is a merge rule", "did you mean `merge: last_non_null`?"]),
        ("column", {"list_delimiter": ", "}, ["did you mean `listagg_delimiter`?"]),
        ("source", {"datagen": {"rowz": 200, "fields": {"a": "id"}}}, ["(at `rowz`: extra inputs are not permitted)"]),
        ("source", {"datagen": {"changelog": {"keys": 0, "versions": 4}}}, ["at `changelog.keys`"]),
        ("source", {"datagen": {"rows": 10}}, ["give either `rows` and `fields`, or `changelog"]),
        ("model", {"maintenance": {"deleted_share": 0}}, ["`maintenance: {'deleted_share': 0}`", "(at `deleted_share`: ",
                                                         "Fix: e.g. `maintenance: {deleted_share: 0.25}`, or remove it."]),
        ("model", {"maintenance": {"small_file": 5}}, ["Fix: rename `small_file` to `small_files` (did you mean it?); "
                                                      "use only `after_write`, `target_file_mib`, `small_files`"]),
        ("var", {"scan_parallelism": 4}, None),
        # the rules are listed once, in the fix (a new-user trial read them twice in one sentence)
        ("column", {"merge": {"rule": "sum"}}, ["(it is none of the setting's values); ", "Fix: one of `last_non_null`"]),
        ("column", {"lakeplan": {"merge": "sum"}}, ["nests `merge: 'sum'` under `lakeplan:`", "Fix: put it directly"]),
        ("source", {"lakeplan": {"scan_parallelism": 4, "primary_key": ["id"]}}, ["Fix: put them directly in the "
                                                                                 "source table `meta:`"]),
        ("column", {"merge": "avg"}, ["`merge: 'avg'`", "Fix: one of `last_non_null`"]),
        ("column", {"merge": "last_vale"}, ["`hll_sketch` (did you mean `last_value`?), or remove it."]),
        ("model", {"change_mode": "merge-on-read"}, ["`auto`, `delta` (did you mean `merge_on_read`?), or remove it."]),
        ("var", {"reuse_sink_enabled": "no"}, ["`reuse_sink_enabled: 'no'`"]),
        ("var", {"fingerprint_version": "v4"}, ["Fix: one of `v2`, `v3`"]),
        # not "or instance of Maintenance": pydantic's class is not the user's word
        ("model", {"maintenance": "yes"}, ["`maintenance: 'yes'`, which lakeplan cannot use (input should be a valid "
                                           "dictionary); "]),
    ],
)
def test_a_problem_names_the_owner_the_setting_the_value_and_the_fix(place, raw, fragments):
    _, found = read_settings(place, "model `m`", raw)
    if fragments is None:  # a user's own var may share a setting's name
        assert found == []
        return
    assert len(found) == 1 and "\n" not in found[0] and "Fix:" in found[0]
    for fragment in fragments:
        assert fragment in found[0]


def test_a_misspelt_dbt_config_is_named_with_dbt_s_key():
    """dbt keeps an unknown config key in silence (a trial's `incremental_stratgy` ran the default strategy)."""
    from dbt_lakeplan.planner import DBT_MODEL_CONFIGS

    [found] = read_settings("model", "model `m`", {"incremental_stratgy": "merge"}, DBT_MODEL_CONFIGS)[1]
    assert found == ("model `m` sets `incremental_stratgy`, which is neither a dbt config nor a lakeplan setting and "
                     "would be ignored: did you mean dbt's `incremental_strategy`? Fix: rename it to "
                     "`incremental_strategy` (a key of your own belongs under `meta:`).")
    # a lakeplan setting's near miss is told as such, and a key far from every setting passes
    assert "did you mean `partial_update_target`?" in read_settings(
        "model", "model `m`", {"partial_update_taget": "t"}, DBT_MODEL_CONFIGS)[1][0]
    assert read_settings("model", "model `m`", {"owner": "me", "sql_header": "set x = 1"}, DBT_MODEL_CONFIGS)[1] == []


def test_other_tools_keys_pass_and_every_problem_of_one_place_is_reported():
    assert read_settings("model", "model `m`", {"file_format": "iceberg", "owner": "me"}, frozenset({"file_format"}))[1] == []
    # a column's meta holds docs and other tools' tags; only a key named like a merge rule is a lakeplan problem,
    # whatever the value of another key (a new-user trial: `unit: count` was refused and told to become `merge`)
    assert read_settings("column", "column `a`", {"owner": "finance", "pii": True, "merged_from": "crm",
                                                  "unit": "count", "priority": "max"})[1] == []
    # on a column no rule merges (not a partial-update target's) such a key is not lakeplan's either
    assert read_settings("column", "column `a`", {"merge_rule": "sum"}, merged=False)[1] == []
    assert read_settings("column", "column `a`", {"lakeplan": {"merge": "sum"}}, merged=False)[1] == []


def test_a_setting_beside_a_name_instead_of_under_meta_is_refused_and_other_keys_pass():
    [problem] = beside_meta("column", "column `total` of model `t`", {"merge": "sum", "tags_extra": 1})
    assert problem.startswith("column `total` of model `t` sets `merge: 'sum'` beside its name")
    assert problem.endswith("Fix: put it under `meta:` (`meta: {merge: 'sum'}`).")
    assert beside_meta("source", "source `raw.events`", {"loader": "x", "scan_parallelism": 4})[0].startswith(
        "source `raw.events` sets `scan_parallelism: 4` beside its name")
    assert beside_meta("source", "source `raw.events`", {}) == []
    settings, found = read_settings("model", "model `m`", {"parallelism": 0, "key_groups": "8", "write_modes": "merge"})
    assert settings is None and len(found) == 3
    # each key of a nested setting is its own problem (a new-user trial fixed one per parse)
    _, found = read_settings("model", "model `m`", {"maintenance": {"deleted_share": 0, "small_file": 3,
                                                                     "expire_after_hours": -1}})
    assert sorted(problem.split("(at `")[1].split("`")[0] for problem in found) == ["deleted_share",
                                                                                    "expire_after_hours", "small_file"]


def test_the_merge_rule_table_lists_exactly_the_declared_rules():
    from dbt_lakeplan.merge_rules import RULES

    text = (REPO / "docs" / "settings.md").read_text()
    table = text[text.index("| `merge` | column types |"):].split("\n\n")[0].splitlines()[2:]
    listed = {name for row in table for name in re.findall(r"`(\w+)`", row.split("|")[1])}
    assert listed == set(RULES)


@pytest.mark.parametrize("place, raw", [
    ("model", {"unique_key": ["id", "Id"]}),
    ("model", {"keyed_by": ["K", "k"]}),
    ("source", {"primary_key": ["id", "ID"]}),
    ("source", {"pre_keyed_by": ["a", "A"]}),
    ("model", {"sequence_groups": {"v": ["a", "A"]}}),
    ("model", {"sequence_groups": {"v": ["a"], "V": ["b"]}}),
])  # fmt: skip
def test_a_column_list_that_names_one_column_twice_is_refused(place, raw):
    [found] = read_settings(place, "model `m`", raw)[1]
    assert "are one column, as Spark ignores case in column names; list each column once" in found
    assert re.search(r"`(\w+)` and `(?!\1`)(?i:\1)`", found)  # both spellings, as written

"""`lakeplan explain` on real dbt, Spark and Iceberg, in this process (so it shares the session): the Exchanges it
reports are those the executed plans of test_source_parallelism.py and test_keyed.py have, the layouts and write
groups it names are the real ones, a saved manifest classes changes, and nothing is written."""

import json
import shutil

import pytest

from dbt_lakeplan.cli import main
from tests.conftest import snapshots, write_files
from tests.integration.test_source_parallelism import EVENT_SOURCES, EVENTS

SOURCES = """
version: 2
sources:
  - name: lake
    schema: lakeplan_explain
    tables:
""" + EVENT_SOURCES + """\
      - {name: wrong_groups, identifier: orders_keyed, meta: {pre_keyed_by: [customer_id], key_groups: 8}}
"""
ORDERS = "order_id,customer_id,amount\n" + "".join(f"{i},{i % 37},{(i * 7) % 101}.5\n" for i in range(1, 400))
PAYMENTS = "customer_id,paid\n" + "".join(f"{c},{c * 3}.25\n" for c in range(0, 37))
KEYED = "{{ config(materialized='table', keyed_by=['customer_id'], key_groups=4) }}\n"
WIDE_YML = """version: 2
models:
  - name: wide
    config: {{unique_key: account_id, partial_update_on_delete: ignore}}
    columns:
      - {{name: account_id, data_type: bigint}}
      - {{name: total, data_type: double, meta: {{merge: {rule}}}}}
      - {{name: last_op, data_type: string}}
{extra}"""


def member(sql, **config):
    settings = ", ".join(f"{key}={value!r}" for key, value in {"partial_update_target": "wide", **config}.items())
    return f"{{{{ config({settings}) }}}}\n{sql}"


FILES = {
    "models/sources.yml": SOURCES,
    "seeds/events_seed.csv": EVENTS,
    "seeds/orders_seed.csv": ORDERS,
    "seeds/payments_seed.csv": PAYMENTS,
    "models/round_robin.sql": (
        "select account_id, count(*) as events from {{ scan_source('lake', 'events_parallel') }} as e group by account_id"
    ),
    "models/hashed.sql": "select * from {{ scan_source('lake', 'events_changelog') }}",
    "models/orders_keyed.sql": KEYED + "select * from {{ ref('orders_seed') }}",
    "models/payments_keyed.sql": KEYED + "select * from {{ ref('payments_seed') }}",
    "models/joined.sql": (
        "select o.order_id, p.paid from {{ ref('orders_keyed') }} as o\n"
        "join {{ ref('payments_keyed') }} as p on o.customer_id = p.customer_id"
    ),
    "models/read_wrong_groups.sql": (
        "select customer_id, count(*) as orders from {{ scan_source('lake', 'wrong_groups') }} group by customer_id"
    ),
    "models/wide.sql": "{{ partial_update_target() }}",
    "models/wide.yml": WIDE_YML.format(rule="sum", extra=""),
    "models/wide_totals.sql": member("select account_id, sum(amount) as total from {{ ref('events_seed') }} group by 1"),
    # a target whose member reads new_rows of a table model the same run writes first (issue 44)
    "models/thin.sql": "{{ partial_update_target() }}",
    "models/thin.yml": "version: 2\nmodels:\n  - name: thin\n    config: {unique_key: customer_id}\n    columns:\n"
                       "      - {name: customer_id, data_type: int}\n      - {name: orders, data_type: bigint}\n",
    "models/thin_orders.sql": member(
        "select customer_id, count(*) as orders from {{ lakeplan.new_rows(ref('orders_keyed')) }} group by 1",
        partial_update_target="thin"),
    "models/wide_ops.sql": member(
        "select account_id, op, seq, op as last_op from {{ ref('events_seed') }}", op_column="op", sequence_by="seq"
    ),
}


@pytest.fixture(scope="module")
def project(make_project, spark, tmp_path_factory):
    dbt = make_project("explain", FILES)
    dbt.run("seed")
    dbt.run("run", "--exclude", "read_wrong_groups", "--write-json")
    saved = tmp_path_factory.mktemp("explain_state")
    shutil.copy(dbt.path / "target" / "manifest.json", saved / "manifest.json")
    dbt.saved_state = saved
    return dbt


@pytest.fixture(scope="module")
def no_broadcast(spark):
    # as in test_keyed.py: small test tables would be broadcast; large keyed tables are not
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    yield
    spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")


def tables(spark):
    """Every table and view of the project's schema, with its Iceberg snapshot count (a view: None)."""
    return {table.name: None if table.tableType == "VIEW" else snapshots(spark, f"lakeplan_explain.{table.name}")
            for table in spark.catalog.listTables("lakeplan_explain") if not table.isTemporary}  # fmt: skip


def explain(project, *args):
    code = main(["explain", "--project-dir", str(project.path), "--no-progress", *args])
    report = json.loads((project.path / "target" / "lakeplan_explain.json").read_text())
    return code, report, {model["name"]: model for model in report["models"]}


@pytest.fixture(scope="module")
def explained(project, spark, no_broadcast):
    before = tables(spark)
    code, report, models = explain(project)
    return code, report, models, before, tables(spark)


def causes(model):
    return [exchange["cause"] for exchange in model["exchanges"] if exchange["shuffle"]]


def test_nothing_is_written(explained):
    *_, before, after = explained
    assert after == before and "wide" in before and "read_wrong_groups" not in after


def test_changelog_hashed_on_its_key_has_one_exchange(explained):
    hashed = explained[2]["hashed"]
    assert hashed["shuffles"] == 1 and causes(hashed) == ["REPARTITION hint"]
    assert hashed["exchanges"][0]["arguments"].startswith("account_id#") and hashed["exchanges"][0]["arguments"].endswith(", 5")
    [source] = hashed["sources"]
    assert (source["scan_parallelism"], source["distribution"], source["partitions"]) == (5, "hashed on account_id", 5)


def test_round_robin_source_into_an_aggregation_has_two(explained):
    model = explained[2]["round_robin"]
    assert model["shuffles"] == 2 and sorted(causes(model)) == ["REPARTITION hint", "aggregate"]
    assert model["sources"][0]["distribution"] == "round-robin" and model["sources"][0]["partitions"] == 3
    assert model["moved_inputs"] == ["source.lakeplan.lake.events_parallel"]


def test_keyed_join_on_matching_layouts_has_none(explained):
    joined = explained[2]["joined"]
    assert joined["shuffles"] == 0 and joined["moved_inputs"] == []
    assert joined["keyed"] == {"avoided_shuffle": True, "reason": "every keyed input's layout fits: no shuffle"}


def test_a_misdeclared_pre_keyed_source_is_reported_with_its_reason(explained):
    code, report, models, *_ = explained
    wrong = models["read_wrong_groups"]
    reason = ('declares pre_keyed_by ["customer_id"] with key_groups 8, but its table lakeplan_explain.orders_keyed is '
              'bucketed by ["customer_id"] into 4 buckets')  # fmt: skip
    assert reason in wrong["error"] and "Fix:" in wrong["error"]
    assert wrong["keyed"]["avoided_shuffle"] is False and reason in wrong["keyed"]["reason"]
    assert code == 1 and models["joined"]["error"] is None  # the others are still explained


def test_insert_only_and_changelog_members_are_two_groups_split_by_input_kind(explained):
    wide = explained[2]["wide"]
    groups = wide["write_groups"]
    assert [group["members"] for group in groups] == [["wide_totals"], ["wide_ops"]]
    assert groups[0]["split_from"] == {"wide_ops": ["inputKind"]} and groups[1]["split_from"] == {"wide_totals": ["inputKind"]}
    assert all(group["collapse"] for group in groups)
    assert wide["state"]["next_run"] == "run" and wide["state"]["stored"] == wide["state"]["fingerprint"]
    assert wide["change"] == {"change_mode": "copy_on_write", "lands": "copy_on_write", "reads": {}, "maintenance": None}
    assert [s["action"] for s in wide["statements"]].count("plan") == 2 and not any(s.get("error") for s in wide["statements"])


def test_html_page_holds_the_dag(explained, project):
    page = (project.path / "target" / "lakeplan_explain.html").read_text()
    assert 'data-id="model.lakeplan.joined"' in page and "<script src" not in page and "http" not in page.split("<svg", 1)[1].replace("http://www.w3.org/2000/svg", "")


@pytest.mark.parametrize("change, expected", [
    ({"models/wide.yml": WIDE_YML.format(rule="max", extra="")},
     {"wide": ("breaking", "column `total` changed")}),
    ({"models/wide.yml": WIDE_YML.format(rule="sum", extra="      - {name: note, data_type: string}\n"),
      "models/wide_note.sql": member("select account_id, 'n' as note from {{ ref('events_seed') }}")},
     {"wide": ("compatible", "member `wide_note` added"), "wide_note": ("added", "new in this project")}),
], ids=["merge_rule", "new_member"])  # fmt: skip
def test_changes_against_a_saved_manifest(project, spark, change, expected):
    originals = {name: (project.path / name).read_text() if (project.path / name).exists() else None for name in change}
    write_files(project.path, change)
    try:
        before = tables(spark)
        _, report, _ = explain(project, "--select", "wide", "--state", str(project.saved_state))
        assert tables(spark) == before
    finally:
        for name, text in originals.items():
            (project.path / name).unlink() if text is None else (project.path / name).write_text(text)
    changed = {c["name"]: (c["class"], c["reasons"]) for c in report["state_comparison"]["changed"]}
    assert set(changed) == set(expected), changed
    for name, (kind, reason) in expected.items():
        assert changed[name][0] == kind and reason in changed[name][1]


def test_a_state_folder_without_a_manifest_is_one_sentence(project, tmp_path, capsys):
    earlier = [project.path / "target" / name for name in ("lakeplan_explain.json", "lakeplan_explain.html")]
    for path in earlier:  # an earlier explain's answer
        path.parent.mkdir(exist_ok=True)
        path.write_text("{}")
    assert main(["explain", "--project-dir", str(project.path), "--state", str(tmp_path)]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"lakeplan explain: --state {tmp_path}: no readable dbt manifest.json there") and "Fix:" in line
    assert not any(path.exists() for path in earlier)  # no earlier answer is left to be read as this one's


def test_a_target_s_write_is_built_once(project, monkeypatch):
    """explain's compile builds a partial-update target's write once, as `dbt compile` does: the compile runner it
    wraps keeps the compiled write's mark, so the plugin does not wrap it again (bench/explain.py found the write
    of the example's customer_360 built twice). Counted by the runtime contexts dbt generates for the target."""
    from dbt.context import providers

    generate, contexts = providers.generate_runtime_model_context, []

    def counted(node, *args):
        contexts.append(node.name)
        return generate(node, *args)

    monkeypatch.setattr(providers, "generate_runtime_model_context", counted)
    code, _, models = explain(project, "--select", "wide")
    assert code == 0 and models["wide"]["write_groups"]
    assert contexts.count("wide") == 2  # its compiled write, then explain's macro


def test_without_graphviz_the_table_and_json_are_written_and_one_sentence_says_how_to_install_it(
        project, monkeypatch, tmp_path, capsys):
    page = project.path / "target" / "lakeplan_explain.html"
    page.write_text("an earlier page")  # not to be read as this run's
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` there (Spark's JVM runs already)
    code, report, models = explain(project, "--select", "joined")
    assert code == 0 and list(models) == ["joined"] and not page.exists()
    out, err = capsys.readouterr()
    assert "joined" in out
    [line] = err.strip().splitlines()
    assert line.startswith("lakeplan explain: Graphviz's `dot` is not on the PATH")
    assert "apt-get install graphviz" in line


def test_a_source_has_one_name_the_users_in_the_json_and_the_table(project, explained, capsys):
    hashed = explained[2]["hashed"]
    assert hashed["sources"][0]["name"] == "lake.events_changelog"
    assert explained[1]["names"]["source.lakeplan.lake.events_changelog"] == "lake.events_changelog"
    assert explained[1]["names"]["seed.lakeplan.events_seed"] == "events_seed"


def test_an_input_written_earlier_in_the_run_is_read_after_that_write_under_the_users_name(explained, capsys):
    thin = explained[2]["thin"]
    assert thin["state"]["next_run"] == "run" and thin["state"]["after"] == ["orders_keyed"]
    # one name per input: the model's name, not its relation lakeplan_explain.orders_keyed
    assert thin["change"]["reads"] == {
        "orders_keyed": "what orders_keyed writes first in this run (nothing new before)"}
    # its write compiled now is `select 0` (nothing new yet): not planned as if it were what the run sends
    [write] = thin["statements"]
    assert write["action"] == "skip" and "plan" not in write and thin["shuffles"] is None
    assert write["reason"].startswith("not planned: nothing is new yet; `dbt run` writes orders_keyed first")


def test_width_widens_the_cells_of_the_table(project, capsys):
    explain(project, "--select", "wide", "--width", "0")
    wide = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("wide "))
    assert "..." not in wide


def test_a_model_over_an_input_not_built_yet_says_so_and_how_to_build_it(make_project, capsys):
    # a newcomer's explain before `make run`: Spark's TABLE_OR_VIEW_NOT_FOUND named no model and no fix
    unbuilt = make_project("explain_unbuilt", {
        "models/changes.sql": "{{ config(materialized='view') }}\nselect 1 as id, 'a' as v",
        "models/current.sql": "{{ config(materialized='upsert', unique_key='id') }}\nselect * from {{ ref('changes') }}",
        "models/totals.sql": "{{ config(materialized='table') }}\nselect id, count(*) as n from {{ ref('changes') }} group by id",
    })
    code, report, models = explain(unbuilt)
    # a table's EXPLAIN answered Spark's refusal as its plan: 0 shuffles and no error were shown (a new-user trial)
    assert models["totals"]["shuffles"] is None and all("plan" not in s for s in models["totals"]["statements"])
    assert "reads `changes` (lakeplan_explain_unbuilt.changes), which is not built yet" in models["totals"]["error"]
    error = models["current"]["error"]
    assert "reads `changes` (lakeplan_explain_unbuilt.changes), which is not built yet" in error, error
    assert "Fix: build it first (`dbt build --select +current`), then run explain again." in error, error
    assert "TABLE_OR_VIEW_NOT_FOUND" not in error and "\n" not in error
    # the terminal says it once per model, without Spark's own sentence on a line of its own (a new-user trial)
    shown = capsys.readouterr().out
    assert shown.count("which is not built yet") == 2 and "TABLE_OR_VIEW_NOT_FOUND" not in shown, shown


def test_explain_writes_where_dbt_writes_its_artifacts(project, tmp_path):
    """--target-path (dbt's flag) moves explain's files with dbt's artifacts; nothing lands in the project's target/
    (before, explain had no such flag: a project whose artifacts live elsewhere found its answer in target/)."""
    default = [project.path / "target" / name for name in ("lakeplan_explain.json", "lakeplan_explain.html")]
    for path in default:
        path.unlink(missing_ok=True)
    elsewhere = tmp_path / "artifacts"
    assert main(["explain", "--project-dir", str(project.path), "--no-progress", "--target-path", str(elsewhere),
                 "--select", "wide"]) == 0
    report = json.loads((elsewhere / "lakeplan_explain.json").read_text())
    assert [model["name"] for model in report["models"]] == ["wide"] and (elsewhere / "lakeplan_explain.html").exists()
    assert not any(path.exists() for path in default)


def test_explain_writes_where_dbt_resolved_the_project_s_target_path(make_project, tmp_path, monkeypatch):
    """dbt_project.yml's target-path is rendered by dbt (env_var here): explain's files go where dbt wrote its
    artifacts. Before, explain read the YAML's text itself and wrote into a folder named `{{ env_var(...) }}`."""
    monkeypatch.delenv("DBT_TARGET_PATH", raising=False)
    monkeypatch.setenv("LAKEPLAN_TEST_ARTIFACTS", str(tmp_path / "rendered"))
    project = make_project("explain_target", {"models/one.sql": "select 1 as id"},
                           {"target-path": "{{ env_var('LAKEPLAN_TEST_ARTIFACTS') }}/dbt"})
    assert main(["explain", "--project-dir", str(project.path), "--no-progress"]) == 0
    rendered = tmp_path / "rendered" / "dbt"
    assert [m["name"] for m in json.loads((rendered / "lakeplan_explain.json").read_text())["models"]] == ["one"]
    assert (rendered / "lakeplan_explain.html").exists()
    assert not any("{{" in path.name for path in project.path.rglob("*"))

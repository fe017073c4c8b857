"""`lakeplan setup-spark`'s pure parts: the Spark settings it writes and the activate script's block."""

from pathlib import Path

from dbt_lakeplan.spark_setup import TEMPLATES, activation_block, spark_defaults, with_block

HOME = Path("/projects/shop/.lakeplan")


def test_the_settings_name_the_projects_own_warehouse_and_metastore():
    conf = spark_defaults((TEMPLATES / "spark-defaults.conf.in").read_text(), HOME)
    settings = [line for line in conf.splitlines() if not line.startswith("#")]
    assert not [line for line in settings if "@LAKEPLAN_HOME@" in line]
    assert "-Dderby.system.home=/projects/shop/.lakeplan/metastore" in conf
    assert "spark.sql.warehouse.dir                               /projects/shop/.lakeplan/warehouse" in conf


def test_the_comments_name_the_placeholder_not_the_projects_home():
    conf = spark_defaults((TEMPLATES / "spark-defaults.conf.in").read_text(), HOME)
    comments = [line for line in conf.splitlines() if line.startswith("#")]
    assert not [line for line in comments if str(HOME) in line]
    assert "# @LAKEPLAN_HOME@ with <home> (.lakeplan/ by default)." in comments


def test_the_block_exports_the_home_the_conf_and_the_callers_variables():
    block = activation_block(HOME, ["DBT_PROFILES_DIR=/projects/shop"])
    assert block.splitlines()[1:4] == [
        'export LAKEPLAN_HOME="/projects/shop/.lakeplan"',
        'export SPARK_CONF_DIR="$LAKEPLAN_HOME/spark-conf"',
        'export DBT_PROFILES_DIR="/projects/shop"',
    ]


def test_a_rerun_leaves_one_block_and_the_rest_of_the_script():
    script = "deactivate () {\n}\nexport VIRTUAL_ENV=x\n"
    older = "# >>> lakeplan (scripts/setup.sh) >>>\nexport LAKEPLAN_HOME=old\n# <<< lakeplan <<<\n"
    block = activation_block(HOME, [])
    once = with_block(script + older, block)
    assert once == script + block
    assert with_block(once, block) == once

"""The README's "lakeplan in an existing dbt project", step by step, in a new project outside this repository with
its own venv, warehouse and Derby metastore: only the README's commands and files (its code blocks, read from the
README), plus the user's own seed, partial-update target and data test. dbt runs in that venv, in its own process.

The venv reuses this repository's installed packages (a path entry) instead of downloading them: a fresh
`pip install` of lakeplan's dependencies takes about six minutes here (pyspark is a 300 MB source build). What
that would install is checked instead by `pip check` in that venv (every requirement dbt-lakeplan declares is met
by the tested versions) and by tests/unit/test_package.py (the bounds exclude pyspark 4). lakeplan itself is
installed there with the README's `pip install <path>` (not editable: the package's files, Spark templates included)."""

import os
import re
import subprocess
import sys
import sysconfig

from tests.conftest import REPO, write_files

PROJECT = "shop"
USER_FILES = {
    "seeds/orders.csv": "order_id,customer_id,amount\n1,10,5.5\n2,10,4.5\n3,20,7.0\n",
    "seeds/customers.csv": "customer_id,name\n10,ann\n20,bob\n30,cy\n",
    "models/customer_wide.sql": "{{ lakeplan.partial_update_target() }}",
    "models/customer_wide.yml": """
version: 2
models:
  - name: customer_wide
    config: {unique_key: customer_id, change_mode: delta}
    columns:
      - {name: customer_id, data_type: bigint}
      - {name: name, data_type: string}
      - {name: spent, data_type: double}
""",
    "models/customer_names.sql": (
        "{{ config(partial_update_target='customer_wide') }}\nselect customer_id, name from {{ ref('customers') }}"),
    "models/customer_spent.sql": (
        "{{ config(partial_update_target='customer_wide') }}\n"
        "select customer_id, sum(amount) as spent from {{ ref('orders') }} group by customer_id"),
    # a plain dbt incremental model: lakeplan's materialization, through the README's macros file
    "models/orders_log.sql": (
        "{{ config(materialized='incremental') }}\nselect * from {{ ref('orders') }}\n"
        "{% if is_incremental() %}where order_id > (select max(order_id) from {{ this }}){% endif %}"),
    # the exact rows of the target, as a data test that `dbt build` runs
    "tests/customer_wide_rows.sql": """
select * from {{ ref('customer_wide') }}
where concat_ws('|', customer_id, name, coalesce(spent, -1)) not in ('10|ann|10.0', '20|bob|7.0', '30|cy|-1.0')
union all
select null, null, null from {{ ref('customer_wide') }} having count(*) != 3
""",
}


def readme_steps() -> tuple[list[str], dict[str, str]]:
    """The README section's shell commands and its files (a YAML or SQL block whose first line names its file)."""
    readme = (REPO / "README.md").read_text()
    section = readme.split("## lakeplan in an existing dbt project", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(\w+)\n(.*?)```", section, re.DOTALL)
    [shell] = [text for kind, text in blocks if kind == "shell"]
    commands = [line.split("  #", 1)[0].strip() for line in shell.splitlines() if line.strip()]
    files = {}
    for kind, text in blocks:
        if kind in ("yaml", "sql"):
            name = text.splitlines()[0].lstrip("#- ").split(",")[0].split(":")[0]
            files[name] = text
    return commands, files


def filled_in(text: str) -> str:
    return (text.replace("<path to lakeplan>", str(REPO)).replace("<your project>", PROJECT)
            .replace("<your profile>", PROJECT).replace("<your schema>", PROJECT))


def make_venv(root):
    """A venv with this repository's packages on its path, and dbt's command, as a project's venv has it."""
    venv = root / ".venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "repo_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (venv / "bin" / "dbt").write_text(f"#!{venv}/bin/python\nimport sys\nfrom dbt.cli.main import cli\nsys.exit(cli())\n")
    (venv / "bin" / "dbt").chmod(0o755)
    return venv


def shell(root, venv, command, timeout=900):
    """`command` in a shell with nothing but PATH and HOME, in the venv as the user has it active."""
    env = {"PATH": f"{venv}/bin:/usr/local/bin:/usr/bin:/bin", "HOME": os.environ["HOME"], "VIRTUAL_ENV": str(venv)}
    script = f"source {venv}/bin/activate && {command}"
    run = subprocess.run(["bash", "-c", script], cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    assert run.returncode == 0, f"`{command}` failed:\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
    return run.stdout


def test_the_readme_adoption_steps_build_a_lakeplan_model_in_a_new_project(tmp_path):
    root = tmp_path / PROJECT
    root.mkdir()
    write_files(root, {"dbt_project.yml": f"name: {PROJECT}\nversion: '1.0'\nconfig-version: 2\nprofile: {PROJECT}\n"
                                          "model-paths: [models]\nseed-paths: [seeds]\ntest-paths: [tests]\n",
                       **USER_FILES})
    venv = make_venv(root)
    commands, files = readme_steps()
    assert commands[:2] == ["pip install <path to lakeplan>", "lakeplan setup-spark"]
    assert set(files) == {"packages.yml", "dbt_project.yml", "macros/lakeplan_incremental.sql", "macros/lakeplan_ref.sql",
                          "profiles.yml"}
    for name, text in files.items():
        (root / name).parent.mkdir(exist_ok=True)
        with open(root / name, "a") as file:
            file.write(filled_in(text))
    # pip without dependencies: they are on the venv's path already (see above)
    shell(root, venv, filled_in(commands[0]).replace("pip install", "pip install --quiet --no-deps"))
    installed = shell(root, venv, "python -c 'import dbt_lakeplan; print(dbt_lakeplan.__file__)'")
    assert installed.startswith(str(venv))  # the installed copy, not this repository's plugins/
    shell(root, venv, "pip check")
    said = shell(root, venv, commands[1])
    assert "Iceberg jars in" in said and f"source {venv}/bin/activate" in said
    for command in commands[2:]:
        shell(root, venv, command)
    conf = (root / ".lakeplan" / "spark-conf" / "spark-defaults.conf").read_text()
    settings = [line for line in conf.splitlines() if not line.startswith("#")]  # comments name the placeholder
    assert f"-Dderby.system.home={root}/.lakeplan/metastore" in conf and not any("@LAKEPLAN_HOME@" in line for line in settings)

    parse = shell(root, venv, "dbt parse --no-partial-parse")  # LAKEPLAN_TPCH_DIR is not set
    assert "WARN" not in parse, parse
    build = shell(root, venv, "dbt build")
    assert "Completed successfully" in build and "WARN=0" in build, build
    # lakeplan's state check (the README's on-run-start), 2 seeds, the target (its members inside it), the
    # incremental model, 1 test
    assert "1 operation" in build and re.search(r"PASS=(\d+)", build).group(1) == "6"
    assert "market_segments" not in build and "customer_segments_snapshot" not in build
    # the target in change_mode delta: the second build appends its change as delta rows, and the data test reads it
    # merged through the README's ref() (read raw, it would hold each key twice)
    build = shell(root, venv, "dbt build")
    assert "Completed successfully" in build and re.search(r"PASS=(\d+)", build).group(1) == "6", build
    delta = shell(root, venv, "dbt show --inline 'select count(*) as delta_rows from shop.customer_wide where lakeplan_delta'")
    assert re.search(r"\|\s+3\s+\|", delta), delta  # one row per key the second build wrote
    # dbt's own incremental materialization in effect (the README's macros file left out) is said, not silent
    (root / "macros" / "lakeplan_incremental.sql").unlink()
    (root / "macros" / "lakeplan_ref.sql").unlink()
    parse = " ".join(shell(root, venv, "dbt parse").split())
    assert ("lakeplan: incremental model `orders_log` runs on dbt-spark's incremental materialization, not lakeplan's"
            in parse), parse
    assert ("lakeplan: `customer_wide` is in change_mode delta, but this project's `ref()` is dbt's, not lakeplan's"
            in parse), parse

"""`lakeplan setup-spark`: gives a dbt project lakeplan's Spark, in one command run from the project's root.

Three things, each idempotent: the Iceberg runtime jar and the Jackson classes it expects relocated go into the
running Python's pyspark (`pyspark/jars/`, which Spark puts on its classpath); lakeplan's Spark settings are written
to `<home>/spark-conf/` (SPARK_CONF_DIR) with the warehouse and the Derby metastore under `<home>`; and the venv's
`bin/activate` gets a block exporting LAKEPLAN_HOME and SPARK_CONF_DIR, so plain `dbt` starts Spark with them.
scripts/setup.sh runs this same command for the template itself (with its own extra exports).

The Iceberg 1.10.2 Spark 3.5 runtime jar for Scala 2.12 refers to org.apache.iceberg.shaded.com.fasterxml.jackson.*
without containing it: relocating Spark's own jackson-core, -databind and -annotations with Debian's jarjar supplies
exactly those classes (DEVELOPERS.md, "The Jackson relocation").
"""

from __future__ import annotations

import shutil
import importlib.util
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ICEBERG_JAR = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
JARJAR = Path("/usr/share/java/jarjar.jar")
JACKSON_RULE = "rule com.fasterxml.jackson.** org.apache.iceberg.shaded.com.fasterxml.jackson.@1\n"
JACKSON_PARTS = ("core", "databind", "annotations")
TEMPLATES = Path(__file__).parent / "spark_conf"
HOME_PLACEHOLDER = "@LAKEPLAN_HOME@"
BLOCK_OPENING = "# >>> lakeplan"
BLOCK_BEGIN = f"{BLOCK_OPENING} (lakeplan setup-spark) >>>"
BLOCK_END = "# <<< lakeplan <<<"


class SetupError(Exception):
    """A step of the setup that cannot be done here, in one sentence with its fix."""


def package_folder(name: str, fix: str) -> Path:
    """Where the installed package `name` lives, wherever this Python finds it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SetupError(f"the Python package {name} is not installed for {sys.executable}. Fix: {fix}, then rerun.")
    return Path(spec.submodule_search_locations[0])


def relocated_name(original: Path) -> str:
    return f"iceberg-shaded-{original.name}"


def install_jars(jars: Path, iceberg_source: Path, jarjar: Path = JARJAR) -> list[Path]:
    """Copies the Iceberg runtime jar into `jars` and relocates Spark's Jackson beside it; returns what it wrote
    (nothing when both are already there)."""
    if not iceberg_source.is_file():
        raise SetupError(f"{iceberg_source} is missing. Fix: pip install 'snowpark-connect-deps-iceberg==1.0.3' (the "
                         "package dbt-lakeplan declares for the Iceberg jar), then rerun.")
    written = []
    if not (jars / ICEBERG_JAR).is_file():
        shutil.copy(iceberg_source, jars / ICEBERG_JAR)
        written.append(jars / ICEBERG_JAR)
    for part in JACKSON_PARTS:
        originals = sorted(jars.glob(f"jackson-{part}-2.*.jar"))
        if not originals:
            raise SetupError(f"no jackson-{part} jar in {jars}. Fix: reinstall pyspark 3.5 (pip install "
                             "--force-reinstall 'pyspark>=3.5,<3.6'), then rerun.")
        relocated = jars / relocated_name(originals[0])
        if not (relocated.is_file() and relocated.stat().st_size > 0):
            relocate_jackson(originals[0], relocated, jarjar)
            written.append(relocated)
    return written


def relocate_jackson(original: Path, relocated: Path, jarjar: Path) -> None:
    """jackson-core is a multi-release jar; jarjar maps its META-INF/versions/* copies onto the same names and gives
    up, so only the Java 8 classes are relocated (they run on every newer Java). jarjar exits 0 even when it fails,
    so its output is checked instead."""
    if not jarjar.is_file():
        raise SetupError(f"{jarjar} is missing (it relocates Jackson for the Iceberg jar). Fix: "
                         "'sudo apt-get install libjarjar-java', then rerun.")
    with tempfile.TemporaryDirectory() as work:
        flat, rules = Path(work) / "flat.jar", Path(work) / "rules.txt"
        with zipfile.ZipFile(original) as source, zipfile.ZipFile(flat, "w", zipfile.ZIP_DEFLATED) as target:
            for entry in source.infolist():
                if not entry.filename.startswith("META-INF/versions/"):
                    target.writestr(entry, source.read(entry))
        rules.write_text(JACKSON_RULE)
        relocated.unlink(missing_ok=True)
        subprocess.run(["java", "-jar", str(jarjar), "process", str(rules), str(flat), str(relocated)], check=False)
    if not (relocated.is_file() and relocated.stat().st_size > 0):
        raise SetupError(f"relocating {original.name} with jarjar failed (see above). Fix: check that Java 17 and "
                         "libjarjar-java are installed, then rerun.")


def spark_defaults(template: str, home: Path) -> str:
    """The template with `home` in its settings; its comments name the placeholder they explain, not a path."""
    lines = template.splitlines(keepends=True)
    return "".join(line if line.startswith("#") else line.replace(HOME_PLACEHOLDER, str(home)) for line in lines)


def write_spark_conf(home: Path, settings: Path | None = None) -> Path:
    """`<home>/spark-conf/` from lakeplan's templates, and the warehouse and metastore folders they name. `settings`
    (a shared catalog's, profiles/shared-catalog.conf) goes after lakeplan's: Spark keeps the last value of a key."""
    conf = home / "spark-conf"
    for folder in (conf, home / "warehouse", home / "metastore"):
        folder.mkdir(parents=True, exist_ok=True)
    template = (TEMPLATES / "spark-defaults.conf.in").read_text()
    if settings is not None:
        if not settings.is_file():
            raise SetupError(f"the Spark settings file {settings} does not exist. Fix: pass an existing file to "
                             "--settings, then rerun.")
        template += f"\n# From {settings.resolve()}: these override the settings above.\n" + settings.read_text()
    (conf / "spark-defaults.conf").write_text(spark_defaults(template, home))
    shutil.copy(TEMPLATES / "log4j2.properties", conf / "log4j2.properties")
    return conf


def activation_block(home: Path, exports: list[str]) -> str:
    """What activation adds: lakeplan's home, the Spark settings Spark reads when its JVM starts, dbt's tracking off,
    then any `NAME=VALUE` the caller adds (VALUE is shell text: it may refer to $LAKEPLAN_HOME)."""
    lines = [f'export LAKEPLAN_HOME="{home}"', 'export SPARK_CONF_DIR="$LAKEPLAN_HOME/spark-conf"']
    lines += [f'export {name}="{value}"' for name, value in (export.split("=", 1) for export in exports)]
    lines.append("export DBT_SEND_ANONYMOUS_USAGE_STATS=false DO_NOT_TRACK=1")
    return "\n".join([BLOCK_BEGIN, *lines, BLOCK_END]) + "\n"


def with_block(script: str, block: str) -> str:
    """The activate script without any earlier lakeplan block (each opens with `# >>> lakeplan`, scripts/setup.sh's
    older ones too), then `block`: a rerun leaves one block."""
    kept, inside = [], False
    for line in script.splitlines(keepends=True):
        inside = inside or line.startswith(BLOCK_OPENING)
        if not inside:
            kept.append(line)
        inside = inside and line.rstrip("\n") != BLOCK_END
    return "".join(kept) + block


def setup_spark(home: Path, conf_only: bool, exports: list[str], settings: Path | None = None) -> list[str]:
    """Does the setup; returns what to tell the user, line by line."""
    home = home.resolve()
    conf = write_spark_conf(home, settings)
    said = [f"Spark settings in {conf} (warehouse and metastore under {home})"]
    if conf_only:
        return said
    install = "pip install dbt-lakeplan (it brings pyspark 3.5 and the Iceberg jar's package)"
    jars = package_folder("pyspark", install) / "jars"
    iceberg = package_folder("snowpark_connect_deps_iceberg", install) / "jars" / ICEBERG_JAR
    written = install_jars(jars, iceberg)
    said.append(f"Iceberg jars in {jars}" + ("" if written else " (already there)"))
    block = activation_block(home, exports)
    activate = Path(sys.prefix) / "bin" / "activate"
    if sys.prefix != sys.base_prefix and activate.is_file():
        activate.write_text(with_block(activate.read_text(), block))
        said.append(f"run `source {activate}` to use them (dbt reads SPARK_CONF_DIR when Spark starts)")
    else:
        said.append("not in a venv: export these before running dbt:\n" + block)
    return said


CONF_DIR_SETTING = "spark.lakeplan.conf_dir"  # a session target's Spark settings folder (profiles/profiles.yml)


def conf_dir_to_start(requested: str, running: str | None) -> str | None:
    """The SPARK_CONF_DIR a session target's Spark must start with (None once it runs with that folder). A JVM reads
    its settings when it starts, so one already started with another folder (another catalog) cannot serve it."""
    if running is None:
        return requested
    if Path(running).resolve() == Path(requested).resolve():
        return None
    raise SetupError(f"this process's Spark already runs with the settings in {running}, but the target's "
                     f"`{CONF_DIR_SETTING}` names {requested} (another catalog). Fix: run dbt for that target in a "
                     "process of its own.")

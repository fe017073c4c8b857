#!/usr/bin/env bash
# Idempotent setup of everything lakeplan needs, inside the repository:
#   .venv/                      pinned Python packages (requirements.txt + constraints.txt)
#   .venv/.../pyspark/jars/     Iceberg 1.10.2 runtime + the Jackson classes it expects relocated   } `lakeplan
#   .lakeplan/spark-conf/       SPARK_CONF_DIR: spark-defaults.conf and log4j2.properties            } setup-spark`
#   .venv/bin/activate          also exports lakeplan's environment, so plain `dbt` works once activated }
# A stamp file records what was installed, so a second run only reinstalls what is missing and rewrites the conf.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
venv="$repo/.venv"
home="$repo/.lakeplan"
jarjar=/usr/share/java/jarjar.jar

fail() { printf 'lakeplan setup: %s\n' "$*" >&2; exit 1; }
step() { printf 'lakeplan setup: %s\n' "$*"; }

check_tools() {
  command -v java >/dev/null ||
    fail "Java is missing. Spark 3.5 needs Java 8, 11 or 17: 'apt-get install openjdk-17-jre-headless', then rerun."
  local version
  version=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1)
  case "$version" in
    1|8|11|17) ;;
    *) fail "Java $version found; Spark 3.5 runs on Java 8, 11 or 17. Put one of those first on PATH (or set JAVA_HOME) and rerun." ;;
  esac
  command -v python3 >/dev/null || fail "python3 is missing: install Python 3.11 with venv and pip, then rerun."
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
    fail "Python $(python3 -V 2>&1) is too old: dbt-core 1.11 needs Python 3.10 or newer."
}

install_python_packages() {
  if [ ! -x "$venv/bin/python" ]; then
    step "creating $venv"
    python3 -m venv "$venv" || fail "could not create $venv: on Debian 'apt-get install python3-venv', then rerun."
  fi
  step "installing pinned Python packages (about a minute the first time)"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
      -r "$repo/requirements.txt" -c "$repo/constraints.txt" ||
    fail "pip install failed (see above). Check that PyPI is reachable, then rerun 'make setup'."
  # The plugin, distribution dbt-lakeplan (pyproject.toml), editable: dbt discovers the module dbt_lakeplan.
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -e "$repo" ||
    fail "installing lakeplan's dbt plugin (pip install -e .) failed (see above); rerun 'make setup'."
  rm -f "$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/lakeplan.pth"
}

ensure_jarjar() {
  [ -f "$jarjar" ] && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    step "installing Debian's libjarjar-java (relocates Jackson for the Iceberg jar)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libjarjar-java >/dev/null ||
      fail "'apt-get install libjarjar-java' failed: run 'apt-get update' and rerun."
  else
    fail "$jarjar is missing: run 'sudo apt-get install libjarjar-java', then rerun."
  fi
}

# A Debian package for a command, installed as root (reading the package lists first where they are empty or stale);
# otherwise a line saying what its absence costs and how to install it. ensure_debian_package COMMAND PACKAGE WHY COST
ensure_debian_package() {
  command -v "$1" >/dev/null && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    step "installing Debian's $2 ($3)"
    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null 2>&1 ||
      { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null; }; } ||
      fail "'apt-get install $2' failed (see above); rerun 'make setup'."
  else
    echo "lakeplan setup: $2 is missing, so $4: run 'sudo apt-get install $2'." >&2
  fi
}

# lakeplan's Spark for this repository: the Iceberg jars in the venv's pyspark, .lakeplan/spark-conf/ and the
# activate script's block, by the same command a user runs in their own project (plugins/dbt_lakeplan/spark_setup.py),
# plus what the template's own project needs: its profiles/ and the example's TPC-H data (kept if set before).
setup_spark() {
  "$venv/bin/lakeplan" setup-spark --home "$home" --export DBT_PROFILES_DIR="$repo/profiles" \
      --export 'LAKEPLAN_TPCH_DIR=${LAKEPLAN_TPCH_DIR:-$LAKEPLAN_HOME/data/tpch/sf0.01}' >/dev/null ||
    fail "'lakeplan setup-spark' failed (see above); rerun 'make setup'."
}

main() {
  check_tools
  local stamp="$venv/.lakeplan-setup" want
  want=$(cat "$repo/requirements.txt" "$repo/constraints.txt" "$repo/pyproject.toml" "$0" | sha256sum | cut -c1-16)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    install_python_packages
    ensure_jarjar
    # the browser test of explain's page drives Debian's chromium with playwright (its own download needs the network)
    ensure_debian_package chromium chromium "the browser test of lakeplan explain's page" \
      "the browser test of lakeplan explain's page fails"
    # explain's page is laid out by Graphviz's dot (plugins/dbt_lakeplan/explain_layout.py)
    ensure_debian_package dot graphviz "lakeplan explain's page" "lakeplan explain writes no page"
    echo "$want" > "$stamp"
    step "done"
  fi
  setup_spark
}

main "$@"

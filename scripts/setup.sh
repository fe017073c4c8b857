#!/usr/bin/env bash
# Idempotent setup of everything lakeplan needs, inside the repository:
#   .venv/                      pinned Python packages (requirements.txt + constraints.txt)
#   .venv/.../pyspark/jars/     Iceberg 1.10.2 runtime + the Jackson classes it expects relocated
#   .lakeplan/spark-conf/       SPARK_CONF_DIR: spark-defaults.conf and log4j2.properties
#   .venv/bin/activate          also exports lakeplan's environment, so plain `dbt` works once activated
# A stamp file records what was installed, so a second run only regenerates the Spark conf.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
venv="$repo/.venv"
home="$repo/.lakeplan"
iceberg_jar=iceberg-spark-runtime-3.5_2.12-1.10.2.jar
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

# The browser test of `lakeplan explain`'s page (tests/integration/test_explain_browser.py) drives Debian's chromium
# with playwright: playwright's own browser download needs the network.
ensure_chromium() {
  command -v chromium >/dev/null && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    step "installing Debian's chromium (the browser test of lakeplan explain's page)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null ||
      fail "'apt-get install chromium' failed: run 'apt-get update' and rerun."
  else
    echo "lakeplan setup: chromium is missing; the browser test will be skipped (sudo apt-get install chromium)." >&2
  fi
}

# The Iceberg 2.12 runtime jar refers to org.apache.iceberg.shaded.com.fasterxml.jackson.* but does not
# ship it; relocating Spark's own Jackson jars to that package supplies exactly those classes.
install_jars() {
  local site jars source rules
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  jars="$site/pyspark/jars"
  source="$site/snowpark_connect_deps_iceberg/jars/$iceberg_jar"
  [ -f "$source" ] || fail "$iceberg_jar not found in snowpark-connect-deps-iceberg; reinstall with 'rm -rf .venv && make setup'."
  cp "$source" "$jars/"
  ensure_jarjar
  rules=$(mktemp)
  echo 'rule com.fasterxml.jackson.** org.apache.iceberg.shaded.com.fasterxml.jackson.@1' > "$rules"
  for part in core databind annotations; do
    local original flat relocated
    original=$(ls "$jars"/jackson-"$part"-2.*.jar | head -1)
    relocated="$jars/iceberg-shaded-$(basename "$original")"
    # jackson-core is a multi-release jar; jarjar maps its META-INF/versions/* copies onto the same
    # names and gives up, so relocate the Java 8 classes only (they run on every newer Java).
    flat=$(mktemp --suffix=.jar)
    "$venv/bin/python" - "$original" "$flat" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as src, zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as dst:
    for entry in src.infolist():
        if not entry.filename.startswith("META-INF/versions/"):
            dst.writestr(entry, src.read(entry))
PY
    rm -f "$relocated"
    java -jar "$jarjar" process "$rules" "$flat" "$relocated"
    rm -f "$flat"
    # jarjar exits 0 even when it fails, so check its output instead.
    [ -s "$relocated" ] || fail "relocating $(basename "$original") with jarjar failed (see above)."
  done
  rm -f "$rules"
}

write_spark_conf() {
  mkdir -p "$home/spark-conf" "$home/warehouse" "$home/metastore"
  sed "s|@LAKEPLAN_HOME@|$home|g" "$repo/profiles/spark-defaults.conf.in" > "$home/spark-conf/spark-defaults.conf"
  cp "$repo/profiles/log4j2.properties" "$home/spark-conf/log4j2.properties"
}

# What `source .venv/bin/activate` adds to the venv's own variables: every path dbt, Spark and the example
# need, so plain `dbt ...` works from the project root. LAKEPLAN_TPCH_DIR keeps a value set before activation.
write_activation() {
  local activate="$venv/bin/activate" begin='# >>> lakeplan (scripts/setup.sh) >>>' end='# <<< lakeplan <<<'
  sed -i "\|^$begin\$|,\|^$end\$|d" "$activate"
  cat >> "$activate" <<EOF
$begin
export LAKEPLAN_HOME="$home"
export SPARK_CONF_DIR="\$LAKEPLAN_HOME/spark-conf"
export DBT_PROFILES_DIR="$repo"
export LAKEPLAN_TPCH_DIR="\${LAKEPLAN_TPCH_DIR:-\$LAKEPLAN_HOME/data/tpch/sf0.01}"
export DBT_SEND_ANONYMOUS_USAGE_STATS=false DO_NOT_TRACK=1
$end
EOF
}

main() {
  check_tools
  local stamp="$venv/.lakeplan-setup" want
  want=$(cat "$repo/requirements.txt" "$repo/constraints.txt" "$repo/pyproject.toml" "$0" | sha256sum | cut -c1-16)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    install_python_packages
    install_jars
    ensure_chromium
    echo "$want" > "$stamp"
    step "done"
  fi
  write_spark_conf
  write_activation
}

main "$@"

#!/usr/bin/env bash
# Writes TPC-H parquet at scale factor $1 into $2 with tpchgen-cli, once per scale factor.
set -euo pipefail
sf=$1 out=$2
[ -f "$out/.complete" ] && exit 0
echo "lakeplan: generating TPC-H data at scale factor $sf into $out"
rm -rf "$out.partial" && mkdir -p "$out.partial"
tpchgen-cli parquet --scale-factor "$sf" --output-dir "$out.partial" ||
  { echo "lakeplan: tpchgen-cli failed (see above); is SF='$sf' a positive number (e.g. 0.01, 1)?" >&2; exit 1; }
touch "$out.partial/.complete"
rm -rf "$out" && mv "$out.partial" "$out"

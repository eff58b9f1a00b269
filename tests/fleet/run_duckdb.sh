#!/usr/bin/env bash
# The DuckDB round trip of docs/FLEET.md, as a farm would run it:
# captures made on two machines, each exported where it was recorded,
# then queried together in DuckDB (its Node package, from the npm registry)
# and written to Parquet partitioned by build.
#   run_duckdb.sh READ_CAPTURE FLEET_GEN BUILD_DIR
# Exit 77 (skipped, with the reason) when node or npm is missing or the
# package cannot be installed.
set -u
read_capture=$1 fleet_gen=$2 build=$3
here=$(cd "$(dirname "$0")" && pwd)
node_dir="$build/fleet-duckdb"

command -v node >/dev/null || { echo "skip: node is not installed"; exit 77; }
command -v npm >/dev/null || { echo "skip: npm is not installed"; exit 77; }
if [ ! -d "$node_dir/node_modules/@duckdb/node-api" ]; then
  mkdir -p "$node_dir"
  cp "$here/duckdb/package.json" "$node_dir/"
  if ! (cd "$node_dir" && timeout 300 npm install --no-audit --no-fund \
        --loglevel=error >npm.log 2>&1); then
    echo "skip: npm install @duckdb/node-api failed:"; tail -5 "$node_dir/npm.log"
    exit 77
  fi
fi
cp "$here/duckdb_check.mjs" "$node_dir/"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/caps" "$tmp/exports" "$tmp/out"
"$fleet_gen" "$tmp/caps" 5 || exit 1           # 40 captures
for m in m1 m2; do                              # each machine exports its own
  "$read_capture" --export "$tmp/exports/$m" "$tmp/caps/$m"-*.cap || exit 1
done
node "$node_dir/duckdb_check.mjs" "$here/queries.sql" "$tmp/exports" \
  "$tmp/out" 40

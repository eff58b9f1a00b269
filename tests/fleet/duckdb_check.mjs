// Runs tests/fleet/queries.sql (the queries of docs/FLEET.md) in DuckDB on
// the tables read_capture --export wrote, and checks the answers against
// what fleet_gen planted and what read_capture itself printed.
//   node duckdb_check.mjs QUERIES.sql EXPORTS_DIR OUT_DIR N_CAPTURES
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const [queriesPath, exportsDir, outDir, nText] = process.argv.slice(2);
const n = Number(nText);
let failed = 0;
function check(cond, what) {
  console.log(`${cond ? 'ok  ' : 'FAIL'} ${what}`);
  if (!cond) failed++;
}

// named blocks: "-- name: X" up to the next one; statements end with ';'
const text = readFileSync(queriesPath, 'utf8')
  .replaceAll('EXPORTS', exportsDir).replaceAll('OUT', outDir);
const blocks = {};
let current = null;
for (const line of text.split('\n')) {
  const m = line.match(/^-- name: (\w+)/);
  if (m) { current = m[1]; blocks[current] = ''; continue; }
  if (current && !line.startsWith('--')) blocks[current] += line + '\n';
}

const db = await DuckDBInstance.create(':memory:');
const con = await db.connect();
async function run(name) {
  const stmts = blocks[name].split(/;\s*\n/).map((s) => s.trim()).filter(Boolean);
  let rows = [];
  for (const s of stmts) {
    const r = await con.runAndReadAll(s);
    rows = r.getRowObjectsJson();
  }
  console.log(`-- ${name}: ${rows.length} row(s)`);
  for (const r of rows.slice(0, 8)) console.log('   ', JSON.stringify(r));
  return rows;
}

await run('views');
const total = await con.runAndReadAll('SELECT count(*) AS n FROM captures');
check(Number(total.getRowObjectsJson()[0].n) === n, `captures: ${n} rows`);

const builds = await run('slowest_builds');
check(builds.length === 2 && builds[0].build === '1.1' &&
      Number(builds[0].captures) === n / 2, 'slowest build is 1.1');

const reg = await run('regressions_by_gpu');
check(reg.length === 1 && reg[0].gpu === 'vendorB' && reg[0].scope === 'shadows' &&
      reg[0].ratio > 1.2 && reg[0].ratio < 1.3,
      'the one regression: shadows on vendorB, about 1.25x');

const trend = await run('p99_trend');
check(trend.length > 0, 'p99 trend by day and build');

check((await run('check_frames')).length === 0,
      'frame count, mean, median, p95, p99 agree with read_capture to 0.001 ms');
check((await run('check_scopes')).length === 0,
      "top scope's self time per frame agrees with read_capture to 0.001 ms");

await run('parquet');
const pq = await run('parquet_read');
check(pq.length === 2 && pq.every((r) => Number(r.captures) === n / 2),
      'Parquet partitioned by build reads back every capture');

console.log(`${failed} failed`);
process.exit(failed ? 1 : 0);

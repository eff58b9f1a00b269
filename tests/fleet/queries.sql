-- The SQL of docs/FLEET.md, run by tests/fleet/duckdb_check.mjs on the
-- tables that read_capture --export wrote on each machine. EXPORTS is the
-- folder holding one export folder per machine; OUT a scratch folder.
-- Each statement is named by the comment line before it.

-- name: views
CREATE VIEW captures AS SELECT * FROM read_csv('EXPORTS/*/captures.csv.gz',
    union_by_name = true, types = {'capture_id': 'VARCHAR', 'build': 'VARCHAR'});
CREATE VIEW frames AS SELECT * FROM read_csv('EXPORTS/*/frames.csv.gz',
    union_by_name = true, types = {'capture_id': 'VARCHAR'});
CREATE VIEW scopes AS SELECT * FROM read_csv('EXPORTS/*/scopes.csv.gz',
    union_by_name = true, types = {'capture_id': 'VARCHAR'});
CREATE VIEW counters AS SELECT * FROM read_csv('EXPORTS/*/counters.csv.gz',
    union_by_name = true, types = {'capture_id': 'VARCHAR'});

-- name: slowest_builds
SELECT build, count(*) AS captures,
       round(median(frame_p99_ms), 3) AS median_p99_ms,
       round(avg(frame_mean_ms), 3) AS mean_frame_ms
FROM captures GROUP BY build ORDER BY median_p99_ms DESC;

-- name: regressions_by_gpu
-- which scope got slower from build 1.0 to 1.1, on which GPU
WITH per_capture AS (
    SELECT c.build, c.gpu, s.scope, sum(s.self_ms) / c.frames AS ms_per_frame
    FROM scopes s JOIN captures c USING (capture_id)
    GROUP BY c.capture_id, c.build, c.gpu, s.scope, c.frames),
per_build AS (
    SELECT gpu, scope,
           avg(ms_per_frame) FILTER (WHERE build = '1.0') AS base_ms,
           avg(ms_per_frame) FILTER (WHERE build = '1.1') AS new_ms
    FROM per_capture GROUP BY gpu, scope)
SELECT gpu, scope, round(base_ms, 3) AS base_ms, round(new_ms, 3) AS new_ms,
       round(new_ms / base_ms, 3) AS ratio
FROM per_build
WHERE base_ms >= 0.01            -- scopes worth 10 us a frame or more
  AND new_ms / base_ms > 1.05    -- and 5 % slower
ORDER BY ratio DESC;

-- name: p99_trend
SELECT CAST(start_time AS DATE) AS day, build,
       round(median(frame_p99_ms), 3) AS median_p99_ms, count(*) AS captures
FROM captures GROUP BY day, build ORDER BY day, build;

-- name: check_frames
-- captures whose frame statistics, recomputed from frames.csv.gz, differ
-- from what read_capture printed by more than its printed precision
SELECT c.capture_id FROM captures c JOIN (
    SELECT capture_id, count(*) AS n, avg(frame_ms) AS mean,
           median(frame_ms) AS med, quantile_cont(frame_ms, 0.95) AS p95,
           quantile_cont(frame_ms, 0.99) AS p99
    FROM frames GROUP BY capture_id) f USING (capture_id)
WHERE f.n <> c.frames OR abs(f.mean - c.frame_mean_ms) > 0.0005000001
   OR abs(f.med - c.frame_median_ms) > 0.0005000001
   OR abs(f.p95 - c.frame_p95_ms) > 0.0005000001
   OR abs(f.p99 - c.frame_p99_ms) > 0.0005000001;

-- name: check_scopes
-- captures whose top scope's self time per frame, recomputed from
-- scopes.csv.gz, differs from read_capture's by more than its precision
SELECT c.capture_id FROM captures c JOIN (
    SELECT capture_id, scope, sum(self_ms) AS ms FROM scopes
    GROUP BY capture_id, scope) s
  ON s.capture_id = c.capture_id AND s.scope = c.top1_scope
WHERE abs(s.ms / c.frames - c.top1_self_ms_per_frame) > 0.0005000001;

-- name: parquet
COPY (SELECT c.build, c.gpu, c.machine, s.* FROM scopes s
      JOIN captures c USING (capture_id))
TO 'OUT/scopes_parquet' (FORMAT PARQUET, PARTITION_BY (build));

-- name: parquet_read
SELECT build, count(*) AS rows, count(DISTINCT capture_id) AS captures
FROM read_parquet('OUT/scopes_parquet/*/*.parquet', hive_partitioning = true)
GROUP BY build ORDER BY build;

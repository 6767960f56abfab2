-- trialdb storage schema.
--
-- Private tables hold one trial's data in normalised form; the public views at the end are
-- the stable interface (users, rules and tests query only those). Every public view works in a
-- plain sqlite3 shell: nothing here calls an extension function.
--
-- Visibility: rows of a (step, worker) are written in one transaction, and a value is visible
-- in the public views only once its global step is complete, so a reader never sees half a step.
-- Completeness is a prefix of the steps (docs/FORMAT.md: a step is complete once a later one
-- is), so one number per trial, trial.complete_through, says what is visible; step.complete
-- mirrors it.

CREATE TABLE IF NOT EXISTS schema_version (
  version INTEGER NOT NULL
);

-- This database's identity, made when the file is created: an export records it beside every
-- trial it writes, so two databases exporting into one folder never take each other's trials.
CREATE TABLE IF NOT EXISTS database_identity (
  uid TEXT NOT NULL
);
INSERT INTO database_identity(uid)
SELECT lower(hex(randomblob(16))) WHERE NOT EXISTS (SELECT 1 FROM database_identity);

CREATE TABLE IF NOT EXISTS trial (
  trial_id         INTEGER PRIMARY KEY,
  name             TEXT NOT NULL UNIQUE,
  path             TEXT NOT NULL,            -- local folder or s3://bucket/prefix
  expected_workers INTEGER NOT NULL DEFAULT 0,  -- number of collection files seen
  ended            INTEGER NOT NULL DEFAULT 0,  -- training_job_end.ts seen
  -- Every global step <= this is complete (-1: none yet; the largest integer once ended). The
  -- value views compare a value's global step with it instead of looking up its step row.
  complete_through INTEGER NOT NULL DEFAULT -1,
  -- The trial's identity: a job removed and another ingested under its name is another trial.
  uid              TEXT NOT NULL DEFAULT (lower(hex(randomblob(16)))),
  -- Counts the writes that changed a step's values (step.change_seq): an export records it and
  -- next time rewrites the steps changed since.
  change_seq       INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS worker (
  worker_id INTEGER PRIMARY KEY,
  trial_id  INTEGER NOT NULL REFERENCES trial(trial_id),
  name      TEXT NOT NULL,
  UNIQUE (trial_id, name)
);

-- One row per global step seen in any index file.
CREATE TABLE IF NOT EXISTS step (
  trial_id     INTEGER NOT NULL REFERENCES trial(trial_id),
  step         INTEGER NOT NULL,
  mode         TEXT NOT NULL,              -- TRAIN, EVAL, PREDICT, GLOBAL
  mode_step    INTEGER NOT NULL,
  -- The step smdebug's Tensor API files this step's values under: the global step, except for
  -- GLOBAL-mode steps, which smdebug keys by their mode step.
  tensor_step  INTEGER NOT NULL,
  complete     INTEGER NOT NULL DEFAULT 0,
  completed_at REAL,                       -- unix time the step became complete
  change_seq   INTEGER NOT NULL DEFAULT 0, -- trial.change_seq of the last write of its values
  PRIMARY KEY (trial_id, step)
) WITHOUT ROWID;

-- (step, worker) pairs whose index file has been ingested completely.
CREATE TABLE IF NOT EXISTS step_worker (
  trial_id  INTEGER NOT NULL,
  step      INTEGER NOT NULL,
  worker_id INTEGER NOT NULL,
  PRIMARY KEY (trial_id, step, worker_id)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS tensor (
  tensor_id INTEGER PRIMARY KEY,
  trial_id  INTEGER NOT NULL REFERENCES trial(trial_id),
  name      TEXT NOT NULL,
  -- How many distinct global steps the tensor has visible values at (count(DISTINCT global_step)
  -- of its tensor_values rows): what `trialdb info --tensors` shows as its steps, read here
  -- instead of counted over its values (schema/tensor_summary.h says how it is kept exact).
  visible_steps INTEGER NOT NULL DEFAULT 0,
  UNIQUE (trial_id, name)
);

-- Joins of two views on the tensor name (e.g. reductions JOIN collections USING (trial, tensor))
-- carry no trial_id; this index keeps them index lookups.
CREATE INDEX IF NOT EXISTS tensor_by_name ON tensor(name);

-- The rest of what `trialdb info --tensors` shows of a tensor, without reading its values: one
-- row per distinct (dtype, shape, worker) of its value rows (no raw value: dtype -1; no shape
-- saved: shape ''), with the least global step of a value row of it that has a step row. A
-- variant is visible once that step is at most the trial's complete_through (visibility is a
-- prefix of the steps), so the variants need no change when steps complete; the ingest adds
-- them as it stores values (schema/tensor_summary.h).
CREATE TABLE IF NOT EXISTS tensor_variant (
  trial_id   INTEGER NOT NULL,
  tensor_id  INTEGER NOT NULL,
  dtype      INTEGER NOT NULL,             -- value.dtype (dtype_name.code), -1 for NULL
  shape      TEXT NOT NULL,                -- value.shape, '' for NULL
  worker_id  INTEGER NOT NULL,
  first_step INTEGER NOT NULL,
  PRIMARY KEY (trial_id, tensor_id, dtype, shape, worker_id)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS collection (
  collection_id INTEGER PRIMARY KEY,
  trial_id      INTEGER NOT NULL REFERENCES trial(trial_id),
  name          TEXT NOT NULL,
  definition    TEXT NOT NULL,             -- merged JSON: include_regex, tensor_names, ...
  UNIQUE (trial_id, name)
);

-- Membership resolved at ingest (listed name or include_regex match, Python re.search).
CREATE TABLE IF NOT EXISTS collection_member (
  collection_id INTEGER NOT NULL,
  tensor_id     INTEGER NOT NULL,
  PRIMARY KEY (collection_id, tensor_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS collection_member_by_tensor ON collection_member(tensor_id);

-- dtype codes of value.dtype (the DType enum of schema/value_blob.h, docs/BLOB_FORMAT.md).
CREATE TABLE IF NOT EXISTS dtype_name (
  code INTEGER PRIMARY KEY,
  name TEXT NOT NULL
);
INSERT OR IGNORE INTO dtype_name(code, name) VALUES
  (0, 'bool'), (1, 'int8'), (2, 'uint8'), (3, 'int16'), (4, 'uint16'), (5, 'int32'), (6, 'uint32'),
  (7, 'int64'), (8, 'uint64'), (9, 'float16'), (10, 'bfloat16'), (11, 'float32'), (12, 'float64'),
  (13, 'complex64'), (14, 'complex128'), (15, 'string');

-- The fixed list of reductions; idx is the bit in value.red_mask and the column order below.
CREATE TABLE IF NOT EXISTS reduction_kind (
  idx       INTEGER PRIMARY KEY,
  reduction TEXT NOT NULL,
  abs       INTEGER NOT NULL
);
INSERT OR IGNORE INTO reduction_kind(idx, reduction, abs) VALUES
  (0, 'min', 0), (1, 'max', 0), (2, 'mean', 0), (3, 'prod', 0), (4, 'std', 0),
  (5, 'variance', 0), (6, 'sum', 0), (7, 'l1', 0), (8, 'l2', 0),
  (9, 'min', 1), (10, 'max', 1), (11, 'mean', 1), (12, 'prod', 1), (13, 'std', 1),
  (14, 'variance', 1), (15, 'sum', 1), (16, 'l1', 1), (17, 'l2', 1);

-- One row per (tensor, global step, worker) for which anything was saved, clustered by tensor
-- and numbered as the views number steps, so a (tensor, step) filter is a search:
-- a tensor's series over all steps (the usual question, e.g. mean |gradient| per step) is one
-- contiguous range of pages, read without a lookup per row. Reductions live beside the
-- metadata so the reductions view never touches a blob.
-- red_src: 0 none, 1 the r_* columns with red_mask saying which are present, 2 a one-element
-- value whose element is in r_min (all 18 follow from it; red_mask 0). Scalar-heavy trials stay
-- small this way. SQLite stores NaN as NULL, so a present reduction with a NULL column is NaN.
-- red_computed: bit idx set = that reduction was computed at ingest from the raw value's elements
-- (kernels/reductions.h), so it is exactly what tensor_reduce() answers for the stored value;
-- clear = the hook's saved one, or written before schema version 10 (not known).
CREATE TABLE IF NOT EXISTS value (
  trial_id   INTEGER NOT NULL,
  tensor_id  INTEGER NOT NULL,
  tensor_step INTEGER NOT NULL,            -- the step number of the views (step.tensor_step)
  -- global step - tensor_step: 0 (no bytes on disk) except for GLOBAL-mode steps, which smdebug
  -- numbers by their mode step. The global step is tensor_step + step_offset.
  step_offset INTEGER NOT NULL,
  worker_id  INTEGER NOT NULL,
  value_id   INTEGER,                      -- value_blob row when the blob is stored apart
  dtype      INTEGER,                      -- dtype_name.code; NULL when no raw value was saved
  shape      TEXT,                         -- JSON array; saved shape when no raw value
  red_src    INTEGER NOT NULL DEFAULT 0,
  red_mask   INTEGER NOT NULL DEFAULT 0,
  red_computed INTEGER NOT NULL DEFAULT 0,
  r_min REAL, r_max REAL, r_mean REAL, r_prod REAL, r_std REAL, r_variance REAL,
  r_sum REAL, r_l1 REAL, r_l2 REAL,
  ra_min REAL, ra_max REAL, ra_mean REAL, ra_prod REAL, ra_std REAL, ra_variance REAL,
  ra_sum REAL, ra_l1 REAL, ra_l2 REAL,
  -- The value blob when it is small (<= 128 bytes); for a value ingested with --values none the
  -- blob's header alone, flagged as holding no bytes (schema/value_blob.h).
  data       BLOB,
  -- Where the raw value's record lies (value_locations): its event file, the record's byte
  -- offset and length in it. NULL when no raw value was saved.
  file_id    INTEGER,                      -- event_file row
  rec_offset INTEGER,
  rec_length INTEGER,
  -- Its value_distribution row (and value_histogram row, the same id): NULL without one.
  distribution_id INTEGER,
  PRIMARY KEY (tensor_id, tensor_step, step_offset, worker_id)
) WITHOUT ROWID;
-- The views number steps as smdebug does (tensor_step), so that is what a step filter searches.
CREATE INDEX IF NOT EXISTS value_by_step ON value(trial_id, tensor_step);

-- Raw values as self-describing blobs (docs/BLOB_FORMAT.md), apart from the metadata so that
-- scans of value stay small. Blobs of at most 128 bytes (scalars, tiny tensors) are in
-- value.data instead: a row of its own would cost more than the value.
CREATE TABLE IF NOT EXISTS value_blob (
  value_id INTEGER PRIMARY KEY,
  data     BLOB NOT NULL
);

-- The distribution of a raw numeric value (kernels/distribution.h), computed at ingest: counts of
-- its elements by class, numpy's percentiles (nanpercentile, linear; NULL where numpy's is NaN)
-- and its histogram on the global bucket grid. One-element values whose element is in r_min
-- (red_src 2) have no row: the views derive theirs from the element. A row is found from its value
-- (value.distribution_id); its id is allocated as the ingest stores the value, so a trial's rows
-- are appended to the table rather than inserted among those of other tensors (bench/README.md,
-- "Distribution rows by id").
CREATE TABLE IF NOT EXISTS value_distribution (
  distribution_id INTEGER PRIMARY KEY,
  nan INTEGER NOT NULL, pos_inf INTEGER NOT NULL, neg_inf INTEGER NOT NULL,
  zero INTEGER NOT NULL, negative INTEGER NOT NULL, positive INTEGER NOT NULL,
  p0 REAL, p1 REAL, p5 REAL, p10 REAL, p25 REAL, p50 REAL, p75 REAL, p90 REAL, p95 REAL, p99 REAL, p100 REAL
);

-- Histograms apart from the statistics, so that scans of value_distribution stay small: a
-- distribution's histogram has its id, and none without finite elements. buckets: the histogram
-- blob (schema/histogram_blob.h): runs of consecutive buckets of the grid, each run's counts
-- bit-packed; the histograms view shows it as JSON text (histogram_json).
CREATE TABLE IF NOT EXISTS value_histogram (
  distribution_id INTEGER PRIMARY KEY,
  buckets         BLOB NOT NULL
);

-- The bucket grid's octaves (kernels/bucket_grid.h), so that plain SQL turns a bucket number into
-- its edges: bucket k != 0 has magnitude key |k| - 1, octave key >> 7 and magnitude edges
-- first + (key & 127) * scale and that + scale. Octave 0 is the float64 subnormals (first 0).
CREATE TABLE IF NOT EXISTS bucket_octave (
  octave INTEGER PRIMARY KEY,
  first  REAL NOT NULL,                      -- 2^(octave - 1023), the octave's lower edge
  scale  REAL NOT NULL                       -- its buckets' width, first / 128
);
CREATE INDEX IF NOT EXISTS bucket_octave_by_first ON bucket_octave(first);
-- Filled once, in octave order: octave 0 has octave 1's scale (2^-1029), and from octave 1
-- (2^-1022, the smallest normal float64) each octave doubles the one before, exactly. The seed's
-- NOT EXISTS leaves the statement nothing to do on every later open of the file.
WITH RECURSIVE
  octaves(octave, first, scale) AS (
    SELECT 0, 0.0, 1.7383389519587512e-310 WHERE NOT EXISTS (SELECT 1 FROM bucket_octave)
    UNION ALL
    SELECT octave + 1, iif(octave = 0, 2.2250738585072014e-308, first * 2), iif(octave = 0, scale, scale * 2)
    FROM octaves WHERE octave < 2046)
INSERT INTO bucket_octave(octave, first, scale)
SELECT * FROM octaves;

-- The event files raw values were read from, one row per file, so that a value's location is
-- three integers (value.file_id, rec_offset, rec_length).
CREATE TABLE IF NOT EXISTS event_file (
  file_id  INTEGER PRIMARY KEY,
  trial_id INTEGER NOT NULL,
  path     TEXT NOT NULL,                  -- relative to the trial root
  UNIQUE (trial_id, path)
);

-- Index files fully ingested (the unit of incremental ingest).
CREATE TABLE IF NOT EXISTS ingested_file (
  trial_id INTEGER NOT NULL,
  path     TEXT NOT NULL,                  -- relative to the trial root
  PRIMARY KEY (trial_id, path)
) WITHOUT ROWID;

-- Index files an ingest with a selection (--steps, --tensors, --collections) read in part or
-- skipped: some of their values may be missing. A later run with another selection reads them
-- again and stores only the values not stored yet; one without a selection then moves them to
-- ingested_file.
CREATE TABLE IF NOT EXISTS partial_file (
  trial_id  INTEGER NOT NULL,
  path      TEXT NOT NULL,
  selection TEXT NOT NULL,                 -- the selection it was last read under (Selection::key)
  PRIMARY KEY (trial_id, path)
) WITHOUT ROWID;

-- Index files left waiting (their event file not yet whole) when the pass moved on to later
-- steps. A later listing starts before the first of them: without this, a step completed after
-- them would make the listing skip them for good.
CREATE TABLE IF NOT EXISTS waiting_file (
  trial_id INTEGER NOT NULL,
  path     TEXT NOT NULL,
  PRIMARY KEY (trial_id, path)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS ingest_error (
  error_id INTEGER PRIMARY KEY,
  trial_id INTEGER NOT NULL,
  file     TEXT NOT NULL,
  step     INTEGER,
  message  TEXT NOT NULL,
  at       REAL NOT NULL DEFAULT ((julianday('now') - 2440587.5) * 86400.0)
);
-- An error is recorded once per trial, file and message (a file read again reports it again):
-- the ingest looks each up here, so that N errors cost O(N log N), not O(N^2).
CREATE INDEX IF NOT EXISTS ingest_error_key ON ingest_error(trial_id, file, message);

-- The processes following a trial (`trialdb ingest --follow`), so that `rm` and `rename` refuse
-- to pull a trial from under its follower (schema/follower_claim.h). A claim outlives a crashed
-- follower only until it expires: on the follower's own host once its process (pid and start
-- time) is gone, elsewhere once its heartbeat is older than kClaimExpirySeconds.
CREATE TABLE IF NOT EXISTS trial_follower (
  trial_id  INTEGER NOT NULL,
  host      TEXT NOT NULL,
  pid       INTEGER NOT NULL,
  started   INTEGER NOT NULL,              -- the process's start time (clock ticks after boot), 0 if unknown
  since     REAL NOT NULL,                 -- unix time the claim was taken
  heartbeat REAL NOT NULL,                 -- unix time the follower last said it is alive
  PRIMARY KEY (trial_id, host, pid)
) WITHOUT ROWID;

-- Fixed planner statistics (installed by Database on creation, see database.cc): shaped like a
-- large trial, so the public views are planned through the indexes (tensor -> value's key,
-- step -> value_by_step) whatever the data, and no ANALYZE pass over the trial is ever needed.
-- Without them SQLite may plan `reductions JOIN collections` as a scan of every value.

-- ---------------------------------------------------------------------------------------------
-- Public views.
-- ---------------------------------------------------------------------------------------------

CREATE VIEW IF NOT EXISTS trials AS
SELECT t.name AS trial,
       t.path AS path,
       max(t.expected_workers, (SELECT count(*) FROM worker w WHERE w.trial_id = t.trial_id)) AS workers,
       t.ended AS ended
FROM trial t;

CREATE VIEW IF NOT EXISTS steps AS
SELECT t.name AS trial, s.step, s.mode, s.mode_step, s.complete
FROM step s JOIN trial t ON t.trial_id = s.trial_id;

CREATE VIEW IF NOT EXISTS tensors AS
SELECT t.name AS trial, tn.name AS tensor
FROM tensor tn JOIN trial t ON t.trial_id = tn.trial_id;

CREATE VIEW IF NOT EXISTS collections AS
SELECT t.name AS trial, c.name AS collection, tn.name AS tensor
FROM collection c
JOIN trial t ON t.trial_id = c.trial_id
JOIN collection_member m ON m.collection_id = c.collection_id
JOIN tensor tn ON tn.tensor_id = m.tensor_id;

-- Both value views: a value is visible when its global step is at most the trial's
-- complete_through (arithmetic on the row, no lookup of the value's step row). Join order:
-- worker comes after value (LEFT JOIN fixes that), so a query is driven by what it filters on
-- (tensor name, collection, step) through value's key or value_by_step, never by a scan of value.
CREATE VIEW IF NOT EXISTS tensor_values AS
SELECT t.name AS trial, tn.name AS tensor, v.tensor_step AS step, w.name AS worker,
       s.mode, s.mode_step, d.name AS dtype, v.shape, coalesce(v.data, b.data) AS value,
       v.tensor_step + v.step_offset AS global_step
FROM value v
JOIN trial t ON t.trial_id = v.trial_id AND v.tensor_step + v.step_offset <= t.complete_through
JOIN step s ON s.trial_id = v.trial_id AND s.step = v.tensor_step + v.step_offset
JOIN tensor tn ON tn.tensor_id = v.tensor_id
LEFT JOIN worker w ON w.worker_id = v.worker_id
LEFT JOIN dtype_name d ON d.code = v.dtype
LEFT JOIN value_blob b ON b.value_id = v.value_id;

-- The reduction kinds are the outer loop (CROSS JOIN): a filter on reduction and abs then picks
-- one kind before any value is read, and each value row is visited once per wanted kind rather
-- than probed for all 18 (bench/README.md, "Vanishing-gradient question"). mode, mode_step,
-- global_step and computed come last (they were added after the first columns). computed: 1 when
-- trialdb computed the reduction from the raw value's elements (exactly tensor_reduce()'s answer
-- for the value), 0 when it is the hook's saved one or not known (ingested before version 10).
CREATE VIEW IF NOT EXISTS reductions AS
SELECT t.name AS trial, tn.name AS tensor, v.tensor_step AS step, w.name AS worker,
       k.reduction, k.abs,
       CASE
         WHEN v.red_src = 2 THEN
           CASE WHEN k.idx IN (4, 5) THEN v.r_min - v.r_min
                WHEN k.idx IN (13, 14) THEN abs(v.r_min) - abs(v.r_min)
                WHEN k.abs OR k.idx IN (7, 8) THEN abs(v.r_min)
                ELSE v.r_min END
         ELSE
           CASE k.idx
             WHEN 0 THEN v.r_min  WHEN 1 THEN v.r_max  WHEN 2 THEN v.r_mean
             WHEN 3 THEN v.r_prod WHEN 4 THEN v.r_std  WHEN 5 THEN v.r_variance
             WHEN 6 THEN v.r_sum  WHEN 7 THEN v.r_l1   WHEN 8 THEN v.r_l2
             WHEN 9 THEN v.ra_min  WHEN 10 THEN v.ra_max WHEN 11 THEN v.ra_mean
             WHEN 12 THEN v.ra_prod WHEN 13 THEN v.ra_std WHEN 14 THEN v.ra_variance
             WHEN 15 THEN v.ra_sum WHEN 16 THEN v.ra_l1  WHEN 17 THEN v.ra_l2
           END
       END AS value,
       s.mode, s.mode_step, v.tensor_step + v.step_offset AS global_step, (v.red_computed >> k.idx) & 1 AS computed
FROM reduction_kind k
CROSS JOIN value v
JOIN trial t ON t.trial_id = v.trial_id AND v.tensor_step + v.step_offset <= t.complete_through
JOIN step s ON s.trial_id = v.trial_id AND s.step = v.tensor_step + v.step_offset
JOIN tensor tn ON tn.tensor_id = v.tensor_id
LEFT JOIN worker w ON w.worker_id = v.worker_id
WHERE v.red_src = 2 OR (v.red_mask >> k.idx) & 1;

-- Where each raw value's record lies: the event file (the trial's folder or s3:// location and
-- the file's path in it), the record's byte offset and length (TFRecord framing included, as the
-- index file gives them). Values the hook saved without a raw value (reductions or a shape only)
-- have no row; those ingested with --values none have theirs.
CREATE VIEW IF NOT EXISTS value_locations AS
SELECT t.name AS trial, tn.name AS tensor, v.tensor_step AS step, w.name AS worker,
       t.path || '/' || f.path AS file, v.rec_offset AS "offset", v.rec_length AS length,
       d.name AS dtype, v.shape, v.tensor_step + v.step_offset AS global_step
FROM value v
JOIN trial t ON t.trial_id = v.trial_id AND v.tensor_step + v.step_offset <= t.complete_through
JOIN event_file f ON f.file_id = v.file_id
JOIN tensor tn ON tn.tensor_id = v.tensor_id
LEFT JOIN worker w ON w.worker_id = v.worker_id
LEFT JOIN dtype_name d ON d.code = v.dtype;

CREATE VIEW IF NOT EXISTS workers AS
SELECT t.name AS trial, w.name AS worker
FROM worker w JOIN trial t ON t.trial_id = w.trial_id;

-- A collection as the hook defined it (smdebug's trial.collection(name)): definition is the
-- merged JSON, the other columns its main fields (text, as in the collections file).
CREATE VIEW IF NOT EXISTS collection_definitions AS
SELECT t.name AS trial, c.name AS collection,
       (SELECT group_concat(r.value, ',') FROM json_each(c.definition, '$.include_regex') r) AS include_regex,
       (SELECT j.value FROM json_each(c.definition) j WHERE j.key = 'save_config') AS save_config,
       (SELECT j.value FROM json_each(c.definition) j WHERE j.key = 'reduction_config') AS reduction_config,
       c.definition
FROM collection c JOIN trial t ON t.trial_id = c.trial_id;

CREATE VIEW IF NOT EXISTS ingest_errors AS
SELECT t.name AS trial, e.file, e.step, e.message
FROM ingest_error e JOIN trial t ON t.trial_id = e.trial_id;

-- Distributions: one row per raw numeric value. A one-element value's is its element's (count
-- 1; numpy gives NaN, here NULL, for the percentiles of a lone infinity).
CREATE VIEW IF NOT EXISTS distributions AS
SELECT t.name AS trial, tn.name AS tensor, v.tensor_step AS step, w.name AS worker, s.mode, s.mode_step,
       coalesce(d.nan + d.pos_inf + d.neg_inf + d.zero + d.negative + d.positive, 1) AS count,
       coalesce(d.nan, v.r_min IS NULL) AS nan,
       coalesce(d.pos_inf, v.r_min = 9e999, 0) AS pos_inf,
       coalesce(d.neg_inf, v.r_min = -9e999, 0) AS neg_inf,
       coalesce(d.zero, v.r_min = 0, 0) AS zero,
       coalesce(d.negative, v.r_min < 0 AND v.r_min > -9e999, 0) AS negative,
       coalesce(d.positive, v.r_min > 0 AND v.r_min < 9e999, 0) AS positive,
       CASE WHEN v.distribution_id IS NOT NULL THEN d.p0 WHEN abs(v.r_min) < 9e999 THEN v.r_min END AS p0,
       CASE WHEN v.distribution_id IS NOT NULL THEN d.p1 WHEN abs(v.r_min) < 9e999 THEN v.r_min END AS p1,
       CASE WHEN v.distribution_id IS NOT NULL THEN d.p5 WHEN abs(v.r_min) < 9e999 THEN v.r_min END AS p5,
       CASE WHEN v.distribution_id IS NOT NULL THEN d.p10 WHEN abs(v.r_min) < 9e999 THEN v.r_min END AS p10,
       CASE WHEN v.distribution_id IS NOT NULL THEN d.p25 WHEN abs(v.r_min) < 9e999 THEN v.r_min END AS p25,
       CASE WHEN v.distribution_id IS NOT NULL THEN d.p50 WHEN abs(v.r_min) < 9e999 THEN v.r_min END AS p50,
       CASE WHEN v.distribution_id IS NOT NULL THEN d.p75 WHEN abs(v.r_min) < 9e999 THEN v.r_min END AS p75,
       CASE WHEN v.distribution_id IS NOT NULL THEN d.p90 WHEN abs(v.r_min) < 9e999 THEN v.r_min END AS p90,
       CASE WHEN v.distribution_id IS NOT NULL THEN d.p95 WHEN abs(v.r_min) < 9e999 THEN v.r_min END AS p95,
       CASE WHEN v.distribution_id IS NOT NULL THEN d.p99 WHEN abs(v.r_min) < 9e999 THEN v.r_min END AS p99,
       CASE WHEN v.distribution_id IS NOT NULL THEN d.p100 WHEN abs(v.r_min) < 9e999 THEN v.r_min END AS p100
FROM value v
JOIN trial t ON t.trial_id = v.trial_id AND v.tensor_step + v.step_offset <= t.complete_through
JOIN step s ON s.trial_id = v.trial_id AND s.step = v.tensor_step + v.step_offset
JOIN tensor tn ON tn.tensor_id = v.tensor_id
LEFT JOIN worker w ON w.worker_id = v.worker_id
LEFT JOIN value_distribution d ON d.distribution_id = v.distribution_id
WHERE v.distribution_id IS NOT NULL OR v.red_src = 2;

-- Histograms in their stored form: one row per raw numeric value, its histogram blob
-- (schema/histogram_blob.h) on the global bucket grid (kernels/bucket_grid.h); NULL without finite
-- elements. A one-element value has no stored histogram: its blob is made from its element
-- (histogram_of_element). The histograms and histogram_buckets views read it through the trialdb
-- extension's histogram_* functions (sqlext/fn_histogram.cc), as do the export, the charts and serve.
CREATE VIEW IF NOT EXISTS histogram_blobs AS
SELECT t.name AS trial, tn.name AS tensor, v.tensor_step AS step, w.name AS worker, s.mode, s.mode_step,
       CASE WHEN v.distribution_id IS NOT NULL THEN h.buckets ELSE histogram_of_element(v.r_min) END AS buckets
FROM value v
JOIN trial t ON t.trial_id = v.trial_id AND v.tensor_step + v.step_offset <= t.complete_through
JOIN step s ON s.trial_id = v.trial_id AND s.step = v.tensor_step + v.step_offset
JOIN tensor tn ON tn.tensor_id = v.tensor_id
LEFT JOIN worker w ON w.worker_id = v.worker_id
LEFT JOIN value_histogram h ON h.distribution_id = v.distribution_id
WHERE v.distribution_id IS NOT NULL OR v.red_src = 2;

-- Histograms: one row per raw numeric value, its histogram on the global bucket grid
-- (kernels/bucket_grid.h) as a JSON object {"<first bucket>": [count, ...], ...} of runs of
-- consecutive buckets (kernels/bucket_runs.h); '{}' without finite elements. Buckets are numbered
-- in value order: 0 holds the zeros; k > 0 the positive values of magnitude key k - 1 (octave
-- (k - 1) >> 7, position (k - 1) & 127 in it, see bucket_octave), -k the negative ones.
CREATE VIEW IF NOT EXISTS histograms AS
SELECT trial, tensor, step, worker, mode, mode_step, coalesce(histogram_json(buckets), '{}') AS buckets
FROM histogram_blobs;

-- Histogram buckets: the histograms expanded, one row per non-empty bucket with its edges:
-- positive buckets hold lo < x <= hi, negative ones lo <= x < hi, the zero bucket (lo = hi = 0)
-- the zeros. Infinities and NaNs are in no bucket: a value's counts sum to its finite elements.
CREATE VIEW IF NOT EXISTS histogram_buckets AS
SELECT g.trial, g.tensor, g.step, g.worker, g.mode, g.mode_step, b.lo, b.hi, b.count
FROM histogram_blobs g
JOIN histogram_each(g.buckets) b;

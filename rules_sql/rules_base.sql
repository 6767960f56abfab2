-- rules_base.sql: what every rule builds on (docs/RULES.md).
--
-- A rule is a view rule_<name>(trial, step, tensor, worker, value, message) that yields the
-- findings of the steps under evaluation, held in rule_batch; it reads its parameters through
-- its one-row view rule_<name>_cfg (a typed column per parameter, pivoted from rule_params), which
-- the runner makes from the declaration block that opens the rule's file (rule_declaration.h).
-- The runner (rule_runner.h) evaluates each trial's complete steps that a rule has not
-- evaluated before (rule_evaluated): per trial and rule it
--   1. fills rule_batch with those steps: all of them for a rule of kind 'batch' (rule_catalog),
--      one at a time, in step order, for a rule of kind 'step';
--   2. UPDATE rule_progress SET step = <the batch's last step>  -- fires the rule's fold
--      triggers, which carry its state tables (running sums, counters, bounded history) over the
--      batch;
--   3. INSERT OR IGNORE INTO rule_finding ... SELECT FROM rule_<name> (the view's rows for the
--      batch's steps).
-- So evaluating a batch reads the batch's steps and bounded state, never the whole trial, and
-- a rule finds the same whichever way a trial's steps are split into batches.
--
-- Rules read only the public views of schema.sql (and rule_now_reduction here schema.sql's fixed
-- list of reduction kinds, reduction_kind, and the value rows the reductions view reads, with its
-- own text; weight_update_ratio a value's blob by the value_blob row that view names), the tables and views defined here, their own
-- state tables and trialdb's SQL functions (sqlext: tensor_*, and the rule_* helpers of
-- sqlext/fn_rule.cc; all in build/lib/trialdb.so, docs/SQL.md).
-- Every rule view and trigger also runs in a stock sqlite3 shell or Python with only
-- build/lib/trialdb.so loaded, also under PRAGMA trusted_schema=OFF (docs/RULES.md). That
-- setting refuses, in views and triggers, every function not registered SQLITE_INNOCUOUS:
-- trialdb's functions all are, but the stock SQLite's (3.40) json_extract, json_array_length,
-- json_group_array (and the other JSON scalar functions) are not, so rules read JSON only with
-- json_each (an innocuous table-valued function) and build it with group_concat.
--
-- This file is applied when a runner opens a database whose schema changed since a runner last
-- applied it (rule_installed, below): tables are IF NOT EXISTS (they hold data), views are dropped
-- and recreated (they hold none).

-- Parameters, as strings (as SageMaker passes them). trial NULL: the default for every trial;
-- a row with a trial name overrides it for that trial.
CREATE TABLE IF NOT EXISTS rule_param (
  trial TEXT,
  rule  TEXT NOT NULL,
  param TEXT NOT NULL,
  value TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS rule_param_key ON rule_param(ifnull(trial, ''), rule, param);
CREATE INDEX IF NOT EXISTS rule_param_by_name ON rule_param(rule, param, trial);

-- Every rule's parameters as its declaration block (rule_declaration.h) declares them, written
-- whenever the runner installs the built-in rules or loads a rule file: the type a value given
-- later is checked against, the default, and what the parameter means (`trialdb rules --list`).
DROP TABLE IF EXISTS rule_param_default;   -- what databases made by an older runner held instead
CREATE TABLE IF NOT EXISTS rule_param_declared (
  rule     TEXT NOT NULL,
  param    TEXT NOT NULL,
  position INTEGER NOT NULL,                 -- in the declaration
  type     TEXT NOT NULL,                    -- real, integer, boolean, regex, ... (integer|none)
  value    TEXT NOT NULL,                    -- the default
  meaning  TEXT NOT NULL,
  PRIMARY KEY (rule, param)
) WITHOUT ROWID;

-- (trial, rule) pairs to evaluate again from the first step: a parameter of the rule changed for
-- the trial, or `trialdb rules --rerun` asked for it. Written in the transaction that changes
-- the parameter; the runner replaces the rule's findings and state in one transaction.
CREATE TABLE IF NOT EXISTS rule_rerun (
  trial TEXT NOT NULL,
  rule  TEXT NOT NULL,
  PRIMARY KEY (trial, rule)
) WITHOUT ROWID;

-- The rules a runner evaluates: the built-in ones and the custom ones loaded with --rule-file.
-- kind 'batch': evaluated over all the steps owed at once (its views yield the findings of every
-- step in rule_batch); 'step': over one step at a time (a rule whose fold triggers expect one
-- step); 'clock': evaluated on every run at the last complete step (stalled_training). The kind
-- is the one the rule's declaration block gives.
CREATE TABLE IF NOT EXISTS rule_catalog (
  rule   TEXT PRIMARY KEY,
  kind   TEXT NOT NULL DEFAULT 'batch',
  source TEXT NOT NULL DEFAULT 'builtin'     -- 'builtin' or the file a custom rule came from
);

-- The steps under evaluation, all of one trial (filled while the runner evaluates; fill it by
-- hand to evaluate a rule view in a plain sqlite3 shell). tensor_step is how tensor_values
-- numbers a step.
DROP TABLE IF EXISTS rule_batch;   -- the one-step table of databases made by an older runner
CREATE TABLE IF NOT EXISTS rule_batch (
  trial       TEXT NOT NULL,
  step        INTEGER NOT NULL,              -- global step
  mode        TEXT NOT NULL,
  mode_step   INTEGER NOT NULL,
  tensor_step INTEGER NOT NULL,
  now         REAL NOT NULL,                 -- unix time of the evaluation
  PRIMARY KEY (trial, step)
) WITHOUT ROWID;
-- How rule_now_distribution_by_tensor (below) finds a value's step in the batch by the numbers the
-- distributions view gives it (a GLOBAL-mode step's tensor_step is its mode step).
CREATE INDEX IF NOT EXISTS rule_batch_by_step_numbers ON rule_batch(trial, tensor_step, mode, mode_step);

-- Per trial and rule, the step evaluated last, and how many steps it has evaluated (its rows of
-- rule_evaluated, counted as they are added: counting them costs a read of all of them). Rules
-- hang their fold triggers on updates of `step`.
CREATE TABLE IF NOT EXISTS rule_progress (
  trial     TEXT NOT NULL,
  rule      TEXT NOT NULL,
  step      INTEGER,                         -- NULL: nothing evaluated yet
  evaluated INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (trial, rule)
) WITHOUT ROWID;

-- The complete steps each rule has evaluated. "Not evaluated before" cannot be "after the last
-- evaluated step": a step whose file arrived late becomes complete after later steps did.
CREATE TABLE IF NOT EXISTS rule_evaluated (
  trial TEXT NOT NULL,
  rule  TEXT NOT NULL,
  step  INTEGER NOT NULL,
  PRIMARY KEY (trial, rule, step)
) WITHOUT ROWID;

-- Findings recorded for an --on-finding command that has not yet confirmed them (exit status 0);
-- queued in the transaction that records them, so each is delivered at least once.
CREATE TABLE IF NOT EXISTS rule_delivery (
  finding_id INTEGER PRIMARY KEY
);

-- What the runner installed last: a fingerprint of this file and the built-in rules (all the SQL
-- it runs on opening a database) and the schema version (PRAGMA schema_version) once it and the
-- rule files were in. A runner that finds both unchanged installs nothing: no one changed the
-- schema since, so every object of that SQL is as it made it (parsing it again costs more than
-- the rules on a small trial).
CREATE TABLE IF NOT EXISTS rule_installed (
  fingerprint    TEXT NOT NULL,
  schema_version INTEGER NOT NULL
);

-- Per trial, the last complete step the runner saw and when it first saw it (stalled_training).
CREATE TABLE IF NOT EXISTS rule_trial_clock (
  trial       TEXT PRIMARY KEY,
  last_step   INTEGER NOT NULL,
  progress_at REAL NOT NULL
) WITHOUT ROWID;

-- Recorded findings. mode / mode_step are those of the global step.
CREATE TABLE IF NOT EXISTS rule_finding (
  finding_id INTEGER PRIMARY KEY,
  trial      TEXT NOT NULL,
  rule       TEXT NOT NULL,
  step       INTEGER NOT NULL,
  mode       TEXT,
  mode_step  INTEGER,
  tensor     TEXT NOT NULL,
  worker     TEXT NOT NULL,
  value      REAL,
  message    TEXT,
  found_at   REAL NOT NULL,
  UNIQUE (trial, rule, step, tensor, worker)
);

DROP VIEW IF EXISTS rule_findings;
CREATE VIEW rule_findings AS
SELECT trial, rule, step, mode, mode_step, tensor, worker, value, message
FROM rule_finding;

-- Parameters in effect for the batch's trial: its own row, else the row for every trial, else
-- the declared default.
DROP VIEW IF EXISTS rule_params;
CREATE VIEW rule_params AS
SELECT d.rule, d.param,
       coalesce((SELECT p.value FROM rule_param p
                 WHERE p.rule = d.rule AND p.param = d.param AND p.trial = (SELECT trial FROM rule_batch LIMIT 1)),
                (SELECT p.value FROM rule_param p
                 WHERE p.rule = d.rule AND p.param = d.param AND p.trial IS NULL),
                d.value) AS value
FROM rule_param_declared d;

-- The raw values of the steps under evaluation, numbered by global step, from the public view
-- tensor_values: a step is searched by its tensor_step (smdebug's numbering, the mode step for
-- GLOBAL-mode steps), and global_step picks the batch's global step among steps that share that
-- number. Values without a raw value (reductions only) are left out; string and complex tensors
-- stay, but their real_value is NULL: real_value is value when it holds real numbers (bool,
-- integers, floats), what rules pass to sqlext's numeric functions (tensor_count,
-- tensor_percentile, tensor_allclose, ..., which reject strings), so a rule over "every tensor"
-- skips those tensors instead of failing. The batch is the outer loop (CROSS JOIN), and the step
-- columns are the batch's, so that a join on them finds a step by rule_batch's key. tensor_step
-- is the step as the public views number it.
DROP VIEW IF EXISTS rule_now;
CREATE VIEW rule_now AS
SELECT v.trial, b.step, b.mode, b.mode_step, v.tensor, v.worker, v.dtype, v.shape, v.value,
       CASE WHEN v.dtype NOT IN ('complex64', 'complex128', 'string') THEN v.value END AS real_value,
       b.tensor_step
FROM rule_batch b
CROSS JOIN tensor_values v
WHERE v.trial = b.trial
  AND v.step = b.tensor_step
  AND v.global_step = b.step
  AND v.value IS NOT NULL;

-- The reductions of the batch's raw values (rule_now), one row per value and reduction kind
-- (reduction, abs as in the `reductions` view): the one the ingest computed from the value's
-- elements (reductions.computed) where there is one, else tensor_reduce() of the blob, the same
-- number either way (the ingest and tensor_reduce() share the kernel; tests/rules_sql/
-- computed_reductions_test.cc holds them to it bit for bit). So a rule that needs a mean, sum,
-- variance or norm of a value reads no blob, unless the value was ingested before schema
-- version 10, its reduction is the hook's saved one, or it is NaN (stored as NULL). NULL for
-- strings, complex values and empty tensors, as tensor_reduce() answers. A filter on reduction
-- and abs picks the kind before any value is read (the kinds are the outer loop, as in the view).
-- The names in braces stand for the `reductions` view's declaration: reductions.values its visible
-- value rows v with their trial t, step s, tensor tn and worker w; reductions.filter,
-- reductions.computed and reductions.value its row filter, computed column and value expression
-- over v and a kind k. The runner writes them in when it installs this file (`trialdb rules
-- --print-sql` shows them), so what a stored reduction means, and which values are visible, is
-- declared in schema.sql only. The values are read from their tables, not from tensor_values: a
-- value found through that view would be looked up again by its names and key for its
-- reductions, which cost half of vanishing_gradient. The blob is read only when no computed
-- reduction answers. In place of rule_now's raw value, where it is, for a rule that reads the
-- blob after pairing values and so copies none: value_inline holds a small value's bytes, else
-- value_id names its value_blob row. rule_value_reduction is every visible raw value's, the kinds
-- first; rule_now_reduction takes those of the batch's steps, the batch first.
DROP VIEW IF EXISTS rule_value_reduction;
CREATE VIEW rule_value_reduction AS
SELECT t.name AS trial, v.tensor_step, v.tensor_step + v.step_offset AS global_step, tn.name AS tensor,
       w.name AS worker, dn.name AS dtype, v.shape, k.reduction, k.abs,
       coalesce(CASE WHEN ({reductions.filter}) AND ({reductions.computed}) THEN {reductions.value} END,
                tensor_reduce(CASE WHEN dn.name NOT IN ('complex64', 'complex128', 'string')
                                   THEN coalesce(v.data, (SELECT data FROM value_blob WHERE value_id = v.value_id))
                              END, k.reduction, k.abs)) AS value,
       v.data AS value_inline, v.value_id
FROM reduction_kind k
CROSS JOIN {reductions.values}
LEFT JOIN dtype_name dn ON dn.code = v.dtype
WHERE v.data IS NOT NULL OR v.value_id IS NOT NULL;

DROP VIEW IF EXISTS rule_now_reduction;
CREATE VIEW rule_now_reduction AS
SELECT r.trial, b.step, b.mode, b.mode_step, r.tensor, r.worker, r.dtype, r.shape, r.reduction, r.abs, r.value,
       r.value_inline, r.value_id
FROM rule_batch b
CROSS JOIN rule_value_reduction r
WHERE r.trial = b.trial
  AND r.tensor_step = b.tensor_step
  AND r.global_step = b.step;

-- The distributions (counts and percentiles, computed at ingest) of the steps under evaluation,
-- from the public view: a GLOBAL-mode step is found by its mode and mode step, as the view
-- numbers it. Rules that need only counts or percentiles read these instead of the blobs.
DROP VIEW IF EXISTS rule_now_distribution;
CREATE VIEW rule_now_distribution AS
SELECT d.trial, b.step, d.mode, d.mode_step, d.tensor, d.worker, d.count, d.nan, d.pos_inf, d.neg_inf,
       d.zero, d.negative, d.positive, d.p0, d.p1, d.p5, d.p10, d.p25, d.p50, d.p75, d.p90, d.p95, d.p99, d.p100
FROM rule_batch b
CROSS JOIN distributions d
WHERE d.trial = b.trial
  AND d.step = b.tensor_step
  AND d.mode = b.mode
  AND d.mode_step = b.mode_step;

-- rule_now, rule_now_reduction and rule_now_distribution planned from the tensor: the same rows
-- and columns, for a rule that reads some tensors. Put one after the list of those tensors, with
-- CROSS JOIN, joined on the name:
--   WITH sel AS MATERIALIZED (SELECT tensor FROM rule_selected_tensors WHERE rule = 'r')
--   SELECT ... FROM sel CROSS JOIN rule_now_by_tensor n WHERE n.tensor = sel.tensor
-- and each name costs a search of its values in the batch's range of steps, then a lookup of each
-- value's step in the batch. The views above start from the batch's steps and visit every value
-- of each (what a rule over every tensor, or a lookup of one value by its step, wants), so through
-- them a rule that reads one tensor costs as much as one that reads them all. rule_batch holds the
-- steps of one trial, so the values are those of (SELECT trial FROM rule_batch LIMIT 1).
DROP VIEW IF EXISTS rule_now_by_tensor;
CREATE VIEW rule_now_by_tensor AS
SELECT v.trial, b.step, b.mode, b.mode_step, v.tensor, v.worker, v.dtype, v.shape, v.value,
       CASE WHEN v.dtype NOT IN ('complex64', 'complex128', 'string') THEN v.value END AS real_value,
       b.tensor_step
FROM tensor_values v
CROSS JOIN rule_batch b
WHERE v.trial = (SELECT trial FROM rule_batch LIMIT 1)
  AND v.step BETWEEN (SELECT min(tensor_step) FROM rule_batch) AND (SELECT max(tensor_step) FROM rule_batch)
  AND v.value IS NOT NULL
  AND b.trial = v.trial
  AND b.step = v.global_step
  AND b.tensor_step = v.step;

DROP VIEW IF EXISTS rule_now_reduction_by_tensor;
CREATE VIEW rule_now_reduction_by_tensor AS
SELECT r.trial, b.step, b.mode, b.mode_step, r.tensor, r.worker, r.dtype, r.shape, r.reduction, r.abs, r.value,
       r.value_inline, r.value_id
FROM rule_value_reduction r
CROSS JOIN rule_batch b
WHERE r.trial = (SELECT trial FROM rule_batch LIMIT 1)
  AND r.tensor_step BETWEEN (SELECT min(tensor_step) FROM rule_batch) AND (SELECT max(tensor_step) FROM rule_batch)
  AND b.trial = r.trial
  AND b.step = r.global_step
  AND b.tensor_step = r.tensor_step;

DROP VIEW IF EXISTS rule_now_distribution_by_tensor;
CREATE VIEW rule_now_distribution_by_tensor AS
SELECT d.trial, b.step, d.mode, d.mode_step, d.tensor, d.worker, d.count, d.nan, d.pos_inf, d.neg_inf,
       d.zero, d.negative, d.positive, d.p0, d.p1, d.p5, d.p10, d.p25, d.p50, d.p75, d.p90, d.p95, d.p99, d.p100
FROM distributions d
CROSS JOIN rule_batch b
WHERE d.trial = (SELECT trial FROM rule_batch LIMIT 1)
  AND d.step BETWEEN (SELECT min(tensor_step) FROM rule_batch) AND (SELECT max(tensor_step) FROM rule_batch)
  AND b.trial = d.trial
  AND b.tensor_step = +d.step   -- unary +: the step range above is not copied to b (SQLite would
  AND b.mode = d.mode           -- search b by that range, every batch row, instead of this step)
  AND b.mode_step = d.mode_step;

-- The worker whose series rules read (losses, labels) and whose name findings about a whole step
-- carry: the worker of the lowest rank, the number its name ends with (smdebug names workers
-- worker_<rank>), ties and names without a number by name.
DROP VIEW IF EXISTS rule_primary_worker;
CREATE VIEW rule_primary_worker AS
SELECT w.trial, w.worker
FROM workers w
WHERE w.trial = (SELECT trial FROM rule_batch LIMIT 1)
ORDER BY substr(w.worker, length(rtrim(w.worker, '0123456789')) + 1) = '',
         CAST(substr(w.worker, length(rtrim(w.worker, '0123456789')) + 1) AS INTEGER),
         w.worker
LIMIT 1;

DROP VIEW IF EXISTS rule_now_primary;
CREATE VIEW rule_now_primary AS
SELECT n.*
FROM rule_now n
WHERE n.worker = (SELECT worker FROM rule_primary_worker);

DROP VIEW IF EXISTS rule_now_primary_reduction;
CREATE VIEW rule_now_primary_reduction AS
SELECT r.*
FROM rule_now_reduction r
WHERE r.worker = (SELECT worker FROM rule_primary_worker);

-- The tensors of the batch's trial that each rule's selection parameters pick: the union of the
-- collections its `collection_names` lists and the tensors any pattern of its `tensor_regex`
-- matches (Python re.search). A rule whose selection defaults to every tensor or to a collection
-- when both are empty says so itself. Selecting from the trial's tensors, not from its values,
-- matches each name once per batch. The collections are searched only when `collection_names`
-- names some: the search costs several times the pattern match, for every tensor.
DROP VIEW IF EXISTS rule_selected_tensors;
CREATE VIEW rule_selected_tensors AS
WITH s AS (
  SELECT rule,
         max(CASE WHEN param = 'collection_names' THEN nullif(value, '') END) AS collection_names,
         max(CASE WHEN param = 'tensor_regex' THEN nullif(value, '') END) AS tensor_regex
  FROM rule_params
  GROUP BY rule
)
SELECT s.rule, t.tensor
FROM s
JOIN tensors t ON t.trial = (SELECT trial FROM rule_batch LIMIT 1)
WHERE rule_regexp_any(s.tensor_regex, t.tensor)
   OR (s.collection_names IS NOT NULL
       AND EXISTS (SELECT 1 FROM collections k
                   WHERE k.trial = t.trial AND k.tensor = t.tensor AND rule_in_list(k.collection, s.collection_names)));

-- The tensors of a collection of the batch's trial.
DROP VIEW IF EXISTS rule_collections;
CREATE VIEW rule_collections AS
SELECT k.collection, k.tensor
FROM collections k
WHERE k.trial = (SELECT trial FROM rule_batch LIMIT 1);

-- rules_base.sql: what every rule builds on (docs/RULES.md).
--
-- A rule is a view rule_<name>(trial, step, tensor, worker, value, message) that yields the
-- findings of ONE step: the step under evaluation, held in rule_cursor. The runner
-- (rule_runner.h) walks each trial's complete steps not evaluated before (rule_evaluated) in
-- order and, per rule and step:
--   1. sets rule_cursor to the step,
--   2. UPDATE rule_progress SET step = S  -- fires the rule's fold triggers, which update its
--      state tables (running sums, counters, bounded history) with step S,
--   3. INSERT OR IGNORE INTO rule_finding ... SELECT FROM rule_<name>.
-- So evaluating step S reads step S and bounded state, never the whole trial.
--
-- Rules read only the public views of schema.sql, the tables and views defined here, their own
-- state tables and trialdb's SQL functions (sqlext: tensor_*, and the rule_* helpers of
-- sqlext/fn_rule.cc; all in build/lib/trialdb.so, docs/SQL.md).
-- Every rule view and trigger also runs in a stock sqlite3 shell or Python with only
-- build/lib/trialdb.so loaded, also under PRAGMA trusted_schema=OFF (docs/RULES.md). That
-- setting refuses, in views and triggers, every function not registered SQLITE_INNOCUOUS:
-- trialdb's functions all are, but the stock SQLite's (3.40) json_extract, json_array_length,
-- json_group_array (and the other JSON scalar functions) are not, so rules read JSON only with
-- json_each (an innocuous table-valued function) and build it with group_concat.
--
-- This file is applied every time a runner opens a database: tables are IF NOT EXISTS (they
-- hold data), views are dropped and recreated (they hold none).

-- Parameters, as strings (as SageMaker passes them). trial NULL: the default for every trial;
-- a row with a trial name overrides it for that trial.
CREATE TABLE IF NOT EXISTS rule_params (
  trial TEXT,
  rule  TEXT NOT NULL,
  param TEXT NOT NULL,
  value TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS rule_params_key ON rule_params(ifnull(trial, ''), rule, param);
CREATE INDEX IF NOT EXISTS rule_params_by_name ON rule_params(rule, param, trial);

-- The built-in rules' parameters as their files define them, refreshed whenever the runner
-- installs the rules: what a parameter given later is checked against (its kind), whatever
-- rule_params holds by then.
CREATE TABLE IF NOT EXISTS rule_param_default (
  rule  TEXT NOT NULL,
  param TEXT NOT NULL,
  value TEXT,
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
-- kind 'step': evaluated once per complete step; 'clock': evaluated on every run at the last
-- complete step (stalled_training).
CREATE TABLE IF NOT EXISTS rule_catalog (
  rule   TEXT PRIMARY KEY,
  kind   TEXT NOT NULL DEFAULT 'step',
  source TEXT NOT NULL DEFAULT 'builtin'     -- 'builtin' or the file a custom rule came from
);

-- The step under evaluation (one row while the runner evaluates; set it by hand to evaluate a
-- rule view in a plain sqlite3 shell). tensor_step is how tensor_values numbers that step.
CREATE TABLE IF NOT EXISTS rule_cursor (
  trial       TEXT NOT NULL,
  step        INTEGER NOT NULL,              -- global step
  mode        TEXT NOT NULL,
  mode_step   INTEGER NOT NULL,
  tensor_step INTEGER NOT NULL,
  now         REAL NOT NULL                  -- unix time of the evaluation
);

-- Per trial and rule, the step evaluated last. Rules hang their fold triggers on updates of it.
CREATE TABLE IF NOT EXISTS rule_progress (
  trial TEXT NOT NULL,
  rule  TEXT NOT NULL,
  step  INTEGER,                             -- NULL: nothing evaluated yet
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

-- Parameters in effect for the cursor's trial: its own rows, else the defaults.
DROP VIEW IF EXISTS rule_param;
CREATE VIEW rule_param AS
SELECT p.rule, p.param, p.value
FROM rule_cursor c
JOIN rule_params p ON p.trial = c.trial
UNION ALL
SELECT p.rule, p.param, p.value
FROM rule_cursor c
JOIN rule_params p ON p.trial IS NULL
WHERE NOT EXISTS (SELECT 1 FROM rule_params q
                  WHERE q.trial = c.trial AND q.rule = p.rule AND q.param = p.param);

-- The raw values of the step under evaluation, numbered by global step, from the public view
-- tensor_values: its step (smdebug's numbering, the mode step for GLOBAL-mode steps) is searched
-- by the cursor's tensor_step, and global_step picks the cursor's global step among steps that
-- share that number. Values without a raw value (reductions only) are left out; string and
-- complex tensors stay, but their real_value is NULL: real_value is value when it holds real
-- numbers (bool, integers, floats), what rules pass to sqlext's numeric functions
-- (tensor_count, tensor_percentile, tensor_allclose, ..., which reject strings), so a rule over
-- "every tensor" skips those tensors instead of failing. The cursor is read through scalar
-- subqueries (constants to the planner: a join with it would make SQLite expect many rows).
DROP VIEW IF EXISTS rule_now;
CREATE VIEW rule_now AS
SELECT v.trial, v.global_step AS step, v.mode, v.mode_step, v.tensor, v.worker, v.dtype, v.shape, v.value,
       CASE WHEN v.dtype NOT IN ('complex64', 'complex128', 'string') THEN v.value END AS real_value
FROM tensor_values v
WHERE v.trial = (SELECT trial FROM rule_cursor)
  AND v.step = (SELECT tensor_step FROM rule_cursor)
  AND v.global_step = (SELECT step FROM rule_cursor)
  AND v.value IS NOT NULL;

-- The distributions (counts and percentiles, computed at ingest) of the step under evaluation,
-- from the public view: a GLOBAL-mode step is found by its mode and mode step, as the view
-- numbers it. Rules that need only counts or percentiles read these instead of the blobs.
DROP VIEW IF EXISTS rule_now_distribution;
CREATE VIEW rule_now_distribution AS
SELECT d.*
FROM distributions d
WHERE d.trial = (SELECT trial FROM rule_cursor)
  AND d.step = (SELECT tensor_step FROM rule_cursor)
  AND d.mode = (SELECT mode FROM rule_cursor)
  AND d.mode_step = (SELECT mode_step FROM rule_cursor);

-- The worker series rules read ("worker_0"; on trials without one, the first worker by name).
DROP VIEW IF EXISTS rule_now_primary;
CREATE VIEW rule_now_primary AS
SELECT n.*
FROM rule_now n
WHERE n.worker = (SELECT CASE WHEN max(m.worker = 'worker_0') THEN 'worker_0' ELSE min(m.worker) END
                  FROM rule_now m);   -- an aggregate, not ORDER BY ... LIMIT 1: no sorter per use

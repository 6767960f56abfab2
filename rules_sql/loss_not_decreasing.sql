-- @rule loss_not_decreasing batch
-- @param collection_names      list    ""   collections of losses followed besides the collection losses
-- @param tensor_regex          regex   ""   losses followed besides the collections
-- @param use_losses_collection boolean true follow the tensors of the collection losses too
-- @param num_steps             integer 10   mode steps over which a loss must fall
-- @param diff_percent          real    0    percentage by which it must fall
-- @param mode                  mode    none the mode followed (none: EVAL, else TRAIN, else GLOBAL)
--
-- Tensors = selection, plus collection `losses` when use_losses_collection. Per tensor, mode
-- M = the given mode, else the first of EVAL, TRAIN, GLOBAL in which the tensor has values
-- (GLOBAL: all its steps, numbered by global step). Walk its saved mode steps m ascending;
-- with `last` = the last checked mode step: check at m when some saved m' <= m - num_steps
-- exists and (no check yet or m >= last + num_steps); then last = m and P = the largest such
-- m'. Finding (at m's global step) when loss_P - loss_m <= |loss_P| * diff_percent / 100.
-- value = loss_m. Losses are the mean of the primary worker's value.
--
-- State: per tensor the mode walked so far, `last`, and the saved (m, loss) from the newest
-- candidate P on (older ones can never be P again). Without a given mode, a tensor walks the
-- best mode it has shown so far; when a better one first appears (EVAL after TRAIN, say) the
-- walk restarts in it and the tensor's findings from the old mode are dropped, so once the
-- trial has ended the findings are exactly the definition's. A batch walks the tensor's losses
-- of the batch in that mode (a recursive CTE carries `last`); its rows, with what the walk
-- decided, are kept until the next batch, for the findings.
CREATE TABLE IF NOT EXISTS rule_loss_not_decreasing_state (
  trial   TEXT NOT NULL,
  tensor  TEXT NOT NULL,
  mode    TEXT NOT NULL,      -- EVAL, TRAIN or GLOBAL (= every step, numbered by global step)
  last_m  INTEGER,            -- the last checked mode step
  step    INTEGER NOT NULL,   -- the last global step folded in, its m and loss
  m       INTEGER NOT NULL,
  loss    REAL,
  p_m     INTEGER,            -- P at `step` when it was checked there
  p_loss  REAL,
  checked INTEGER NOT NULL,
  PRIMARY KEY (trial, tensor)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS rule_loss_not_decreasing_hist (
  trial  TEXT NOT NULL,
  tensor TEXT NOT NULL,
  m      INTEGER NOT NULL,
  loss   REAL,
  PRIMARY KEY (trial, tensor, m)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS rule_loss_not_decreasing_walk (
  trial   TEXT NOT NULL,
  tensor  TEXT NOT NULL,
  step    INTEGER NOT NULL,   -- a step of the last batch where the loss is saved in the walked mode
  mode    TEXT NOT NULL,
  m       INTEGER NOT NULL,
  loss    REAL,
  restart INTEGER NOT NULL,   -- the batch brought a better mode than the state's
  last_m  INTEGER,            -- the walk after the step: the last checked mode step
  p_m     INTEGER,            -- P and its loss
  p_loss  REAL,
  checked INTEGER,
  PRIMARY KEY (trial, tensor, step)
) WITHOUT ROWID;
-- P of a row is searched among the walk's earlier rows by m (rule_loss_not_decreasing_steps).
CREATE INDEX IF NOT EXISTS rule_loss_not_decreasing_walk_by_m ON rule_loss_not_decreasing_walk(trial, tensor, m);

-- The batch's selected losses in the mode each tensor walks: the best of the state's mode and
-- the modes the batch shows (rows of other modes are left out).
DROP VIEW IF EXISTS rule_loss_not_decreasing_input;
CREATE VIEW rule_loss_not_decreasing_input AS
WITH selection AS MATERIALIZED (
  SELECT tensor FROM rule_selected_tensors WHERE rule = 'loss_not_decreasing'
  UNION
  SELECT tensor FROM rule_collections, rule_loss_not_decreasing_cfg AS cfg
  WHERE collection = 'losses' AND cfg.use_losses_collection
),
x AS MATERIALIZED (
  SELECT n.trial, n.tensor, n.step, n.mode_step, n.value AS loss,
         CASE WHEN cfg.mode IS NULL THEN (CASE WHEN n.mode IN ('EVAL', 'TRAIN') THEN n.mode ELSE 'GLOBAL' END)
              WHEN cfg.mode = 'GLOBAL' THEN 'GLOBAL'
              WHEN cfg.mode = n.mode THEN n.mode
         END AS m_mode
  FROM selection CROSS JOIN rule_now_reduction_by_tensor n, rule_loss_not_decreasing_cfg AS cfg
  WHERE n.tensor = selection.tensor
    AND n.worker = (SELECT worker FROM rule_primary_worker)
    AND n.reduction = 'mean' AND n.abs = 0
),
ranked AS (
  SELECT x.*, CASE x.m_mode WHEN 'EVAL' THEN 3 WHEN 'TRAIN' THEN 2 ELSE 1 END AS rank,
         max(CASE x.m_mode WHEN 'EVAL' THEN 3 WHEN 'TRAIN' THEN 2 ELSE 1 END) OVER (PARTITION BY x.tensor) AS best
  FROM x
  WHERE x.m_mode IS NOT NULL
)
SELECT r.trial, r.tensor, r.step, r.m_mode AS mode,
       CASE WHEN r.m_mode = 'GLOBAL' THEN r.step ELSE r.mode_step END AS m,
       r.loss,
       s.mode IS NOT NULL AND r.rank > CASE s.mode WHEN 'EVAL' THEN 3 WHEN 'TRAIN' THEN 2 ELSE 1 END AS restart
FROM ranked r
LEFT JOIN rule_loss_not_decreasing_state s ON s.trial = r.trial AND s.tensor = r.tensor
WHERE r.rank = r.best
  AND r.rank >= CASE s.mode WHEN 'EVAL' THEN 3 WHEN 'TRAIN' THEN 2 WHEN 'GLOBAL' THEN 1 ELSE 0 END;

-- The walk over the batch's rows (rule_loss_not_decreasing_walk, after a restart's state is
-- dropped): P of each row, the largest saved m' <= m - num_steps among the history and the
-- batch's earlier rows, and whether the row is checked.
DROP VIEW IF EXISTS rule_loss_not_decreasing_next;
DROP VIEW IF EXISTS rule_loss_not_decreasing_steps;
CREATE VIEW rule_loss_not_decreasing_steps AS
WITH RECURSIVE saved AS (  -- every saved (m, loss) a P can be
  SELECT h.trial, h.tensor, h.m, h.loss FROM rule_loss_not_decreasing_hist h
  WHERE h.trial = (SELECT trial FROM rule_batch LIMIT 1)
  UNION ALL
  SELECT w.trial, w.tensor, w.m, w.loss FROM rule_loss_not_decreasing_walk w
  WHERE w.trial = (SELECT trial FROM rule_batch LIMIT 1)
),
r AS MATERIALIZED (
  SELECT w.trial, w.tensor, w.step, w.mode, w.m, w.loss, w.restart,
         row_number() OVER (PARTITION BY w.tensor ORDER BY w.m) AS i,
         (SELECT max(m)  -- the largest in saved, each table searched by its (trial, tensor, m) key
          FROM (SELECT max(h.m) AS m FROM rule_loss_not_decreasing_hist h
                WHERE h.trial = w.trial AND h.tensor = w.tensor AND h.m < w.m AND h.m <= w.m - cfg.num_steps
                UNION ALL
                SELECT max(v.m) FROM rule_loss_not_decreasing_walk v
                WHERE v.trial = w.trial AND v.tensor = w.tensor AND v.m < w.m AND v.m <= w.m - cfg.num_steps)) AS p_m
  FROM rule_loss_not_decreasing_walk w, rule_loss_not_decreasing_cfg AS cfg
  WHERE w.trial = (SELECT trial FROM rule_batch LIMIT 1)
),
walk(tensor, i, last_m, checked) AS (
  SELECT r.tensor, 0, s.last_m, 0
  FROM r
  LEFT JOIN rule_loss_not_decreasing_state s ON s.trial = r.trial AND s.tensor = r.tensor
  WHERE r.i = 1
  UNION ALL
  SELECT w.tensor, r.i,
         CASE WHEN r.p_m IS NOT NULL AND (w.last_m IS NULL OR r.m >= w.last_m + cfg.num_steps) THEN r.m ELSE w.last_m END,
         r.p_m IS NOT NULL AND (w.last_m IS NULL OR r.m >= w.last_m + cfg.num_steps)
  FROM walk w
  JOIN r ON r.tensor = w.tensor AND r.i = w.i + 1
  CROSS JOIN rule_loss_not_decreasing_cfg AS cfg
)
SELECT r.trial, r.tensor, r.step, r.mode, r.m, r.loss, r.restart, w.last_m, r.p_m,
       (SELECT v.loss FROM saved v WHERE v.tensor = r.tensor AND v.m = r.p_m) AS p_loss,
       w.checked
FROM r
JOIN walk w ON w.tensor = r.tensor AND w.i = r.i;

DROP TRIGGER IF EXISTS rule_loss_not_decreasing_fold;
CREATE TRIGGER rule_loss_not_decreasing_fold
AFTER UPDATE OF step ON rule_progress
WHEN new.rule = 'loss_not_decreasing'
BEGIN
  DELETE FROM rule_loss_not_decreasing_walk WHERE trial = new.trial;
  INSERT INTO rule_loss_not_decreasing_walk(trial, tensor, step, mode, m, loss, restart)
  SELECT trial, tensor, step, mode, m, loss, restart FROM rule_loss_not_decreasing_input;
  -- A better mode appeared: restart the walk there.
  DELETE FROM rule_finding
  WHERE trial = new.trial AND rule = 'loss_not_decreasing'
    AND tensor IN (SELECT tensor FROM rule_loss_not_decreasing_walk WHERE trial = new.trial AND restart);
  DELETE FROM rule_loss_not_decreasing_hist
  WHERE trial = new.trial
    AND tensor IN (SELECT tensor FROM rule_loss_not_decreasing_walk WHERE trial = new.trial AND restart);
  DELETE FROM rule_loss_not_decreasing_state
  WHERE trial = new.trial
    AND tensor IN (SELECT tensor FROM rule_loss_not_decreasing_walk WHERE trial = new.trial AND restart);
  -- Walk the batch.
  INSERT OR REPLACE INTO rule_loss_not_decreasing_walk(trial, tensor, step, mode, m, loss, restart, last_m, p_m, p_loss, checked)
  SELECT trial, tensor, step, mode, m, loss, restart, last_m, p_m, p_loss, checked
  FROM rule_loss_not_decreasing_steps;
  INSERT OR REPLACE INTO rule_loss_not_decreasing_hist(trial, tensor, m, loss)
  SELECT trial, tensor, m, loss FROM rule_loss_not_decreasing_walk WHERE trial = new.trial;
  INSERT OR REPLACE INTO rule_loss_not_decreasing_state(trial, tensor, mode, last_m, step, m, loss, p_m, p_loss, checked)
  SELECT w.trial, w.tensor, w.mode, w.last_m, w.step, w.m, w.loss, w.p_m, w.p_loss, w.checked
  FROM rule_loss_not_decreasing_walk w
  WHERE w.trial = new.trial
    AND w.m = (SELECT max(v.m) FROM rule_loss_not_decreasing_walk v WHERE v.trial = w.trial AND v.tensor = w.tensor);
  -- Saved steps before the newest candidate P can never be P again.
  DELETE FROM rule_loss_not_decreasing_hist
  WHERE trial = new.trial
    AND m < (SELECT s.p_m FROM rule_loss_not_decreasing_state s
             WHERE s.trial = rule_loss_not_decreasing_hist.trial
               AND s.tensor = rule_loss_not_decreasing_hist.tensor);
END;

DROP VIEW IF EXISTS rule_loss_not_decreasing;
CREATE VIEW rule_loss_not_decreasing AS
SELECT s.trial, s.step, s.tensor, (SELECT worker FROM rule_primary_worker) AS worker, s.loss AS value,
       printf('%s loss %g at mode step %d did not decrease from %g at mode step %d',
              s.mode, s.loss, s.m, s.p_loss, s.p_m) AS message
FROM rule_batch c
JOIN rule_loss_not_decreasing_walk s ON s.trial = c.trial AND s.step = c.step
CROSS JOIN rule_loss_not_decreasing_cfg AS cfg
WHERE s.checked AND s.p_loss - s.loss <= abs(s.p_loss) * cfg.diff_percent / 100.0;

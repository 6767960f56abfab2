-- @rule overtraining batch
-- @param patience_train      integer 5   TRAIN losses without improvement before a finding (with patience_validation)
-- @param patience_validation integer 10  EVAL losses without improvement before a finding (with patience_train)
-- @param delta               real    0.1 the least fall of a loss below its best that is an improvement
--
-- Per tensor of `losses`, separately for TRAIN and EVAL: the first value sets best (counter
-- 0); a value below best - delta is an improvement (best = value, counter 0), any other adds
-- 1 to that mode's counter. Finding at a TRAIN or EVAL step when counter(TRAIN) >=
-- patience_train and counter(EVAL) >= patience_validation (both modes seen).
-- value = counter(EVAL). Losses: the primary worker's mean value.
--
-- State: per tensor, best and counter of each mode after the last step evaluated. A batch walks
-- each tensor's losses in step order from there (a recursive CTE); the states after each of the
-- batch's steps are kept until the next batch, for the findings.
CREATE TABLE IF NOT EXISTS rule_overtraining_state (
  trial        TEXT NOT NULL,
  tensor       TEXT NOT NULL,
  step         INTEGER NOT NULL,   -- the last TRAIN or EVAL step folded in
  train_best   REAL,               -- NULL until the mode is seen
  train_count  INTEGER NOT NULL,
  eval_best    REAL,
  eval_count   INTEGER NOT NULL,
  PRIMARY KEY (trial, tensor)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS rule_overtraining_walk (
  trial        TEXT NOT NULL,
  tensor       TEXT NOT NULL,
  step         INTEGER NOT NULL,   -- a TRAIN or EVAL step of the last batch, and the state after it
  train_best   REAL,
  train_count  INTEGER NOT NULL,
  eval_best    REAL,
  eval_count   INTEGER NOT NULL,
  PRIMARY KEY (trial, tensor, step)
) WITHOUT ROWID;

-- The states after each step of the batch where a loss is saved.
DROP VIEW IF EXISTS rule_overtraining_next;
DROP VIEW IF EXISTS rule_overtraining_steps;
CREATE VIEW rule_overtraining_steps AS
WITH RECURSIVE selection AS MATERIALIZED (
  SELECT tensor FROM rule_collections WHERE collection = 'losses'
),
losses AS MATERIALIZED (  -- each loss looked up once (the filter below would look it up again)
  SELECT n.trial, n.tensor, n.step, n.mode, n.value AS loss
  FROM selection CROSS JOIN rule_now_reduction_by_tensor n
  WHERE n.tensor = selection.tensor
    AND n.worker = (SELECT worker FROM rule_primary_worker)
    AND n.reduction = 'mean' AND n.abs = 0
    AND n.mode IN ('TRAIN', 'EVAL')
),
x AS MATERIALIZED (  -- the batch's losses, numbered per tensor in step order
  SELECT l.*, row_number() OVER (PARTITION BY l.tensor ORDER BY l.step) AS i
  FROM losses l
  WHERE l.loss IS NOT NULL
),
walk(trial, tensor, i, step, train_best, train_count, eval_best, eval_count) AS (
  SELECT x.trial, x.tensor, 0, s.step, s.train_best, ifnull(s.train_count, 0), s.eval_best, ifnull(s.eval_count, 0)
  FROM x
  LEFT JOIN rule_overtraining_state s ON s.trial = x.trial AND s.tensor = x.tensor
  WHERE x.i = 1
  UNION ALL
  SELECT w.trial, w.tensor, x.i, x.step,
         CASE WHEN x.mode <> 'TRAIN' THEN w.train_best
              WHEN w.train_best IS NULL OR x.loss < w.train_best - cfg.delta THEN x.loss
              ELSE w.train_best END,
         CASE WHEN x.mode <> 'TRAIN' THEN w.train_count
              WHEN w.train_best IS NULL OR x.loss < w.train_best - cfg.delta THEN 0
              ELSE w.train_count + 1 END,
         CASE WHEN x.mode <> 'EVAL' THEN w.eval_best
              WHEN w.eval_best IS NULL OR x.loss < w.eval_best - cfg.delta THEN x.loss
              ELSE w.eval_best END,
         CASE WHEN x.mode <> 'EVAL' THEN w.eval_count
              WHEN w.eval_best IS NULL OR x.loss < w.eval_best - cfg.delta THEN 0
              ELSE w.eval_count + 1 END
  FROM walk w
  JOIN x ON x.tensor = w.tensor AND x.i = w.i + 1
  CROSS JOIN rule_overtraining_cfg AS cfg
)
SELECT trial, tensor, step, train_best, train_count, eval_best, eval_count
FROM walk
WHERE i > 0;

DROP TRIGGER IF EXISTS rule_overtraining_fold;
CREATE TRIGGER rule_overtraining_fold
AFTER UPDATE OF step ON rule_progress
WHEN new.rule = 'overtraining'
BEGIN
  DELETE FROM rule_overtraining_walk WHERE trial = new.trial;
  INSERT INTO rule_overtraining_walk(trial, tensor, step, train_best, train_count, eval_best, eval_count)
  SELECT trial, tensor, step, train_best, train_count, eval_best, eval_count
  FROM rule_overtraining_steps;
  INSERT OR REPLACE INTO rule_overtraining_state(trial, tensor, step, train_best, train_count, eval_best, eval_count)
  SELECT w.trial, w.tensor, w.step, w.train_best, w.train_count, w.eval_best, w.eval_count
  FROM rule_overtraining_walk w
  WHERE w.trial = new.trial
    AND w.step = (SELECT max(v.step) FROM rule_overtraining_walk v WHERE v.trial = w.trial AND v.tensor = w.tensor);
END;

DROP VIEW IF EXISTS rule_overtraining;
CREATE VIEW rule_overtraining AS
SELECT s.trial, s.step, s.tensor, (SELECT worker FROM rule_primary_worker) AS worker, s.eval_count AS value,
       printf('no improvement for %d training and %d validation steps', s.train_count, s.eval_count) AS message
FROM rule_batch c
JOIN rule_overtraining_walk s ON s.trial = c.trial AND s.step = c.step
CROSS JOIN rule_overtraining_cfg AS cfg
WHERE s.train_best IS NOT NULL AND s.eval_best IS NOT NULL
  AND s.train_count >= cfg.patience_train AND s.eval_count >= cfg.patience_validation;

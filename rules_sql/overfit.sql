-- @rule overfit batch
-- @param tensor_regex    regex   ""  the losses compared (empty: the collection losses)
-- @param start_step      integer 0   the first step compared
-- @param patience        integer 1   EVAL steps in a row above the threshold before a finding
-- @param ratio_threshold real    0.1 relative excess of the EVAL loss over the TRAIN loss that counts
--
-- Per tensor, walk its saved steps in global order. A TRAIN block is a maximal run of
-- consecutive saved TRAIN steps; an EVAL block likewise. At each EVAL step S with
-- S >= start_step and a TRAIN block before it: train = mean of the latest TRAIN block,
-- val = mean of the current EVAL block so far (up to S), ratio = (val - train) / train.
-- A counter of consecutive such EVAL steps with ratio > ratio_threshold (reset to 0
-- otherwise); finding when counter >= patience. value = ratio. Losses: the primary worker's mean value;
-- one that is not a number (a string tensor's, a NaN mean) is not folded in.
--
-- State: per tensor the mode of its last saved step, the sum and length of the latest TRAIN
-- block and of the current EVAL block, and the counter. A batch walks each tensor's losses in
-- step order from there (a recursive CTE); the states after each of the batch's steps are kept
-- until the next batch, for the findings.
CREATE TABLE IF NOT EXISTS rule_overfit_state (
  trial     TEXT NOT NULL,
  tensor    TEXT NOT NULL,
  step      INTEGER NOT NULL,   -- the last saved step folded in and its mode
  mode      TEXT NOT NULL,
  train_sum REAL NOT NULL,
  train_n   INTEGER NOT NULL,
  eval_sum  REAL NOT NULL,
  eval_n    INTEGER NOT NULL,
  ratio     REAL,               -- at `step`, when it was an EVAL step that was compared
  counter   INTEGER NOT NULL,
  PRIMARY KEY (trial, tensor)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS rule_overfit_walk (
  trial     TEXT NOT NULL,
  tensor    TEXT NOT NULL,
  step      INTEGER NOT NULL,   -- a saved step of the last batch, and the state after it
  mode      TEXT NOT NULL,
  train_sum REAL NOT NULL,
  train_n   INTEGER NOT NULL,
  eval_sum  REAL NOT NULL,
  eval_n    INTEGER NOT NULL,
  ratio     REAL,
  counter   INTEGER NOT NULL,
  PRIMARY KEY (trial, tensor, step)
) WITHOUT ROWID;

-- The states after each step of the batch where a loss is saved.
DROP VIEW IF EXISTS rule_overfit_next;
DROP VIEW IF EXISTS rule_overfit_steps;
CREATE VIEW rule_overfit_steps AS
WITH RECURSIVE selection AS MATERIALIZED (
  SELECT tensor FROM rule_selected_tensors, rule_overfit_cfg AS cfg WHERE rule = 'overfit' AND cfg.tensor_regex IS NOT NULL
  UNION ALL
  SELECT tensor FROM rule_collections, rule_overfit_cfg AS cfg WHERE collection = 'losses' AND cfg.tensor_regex IS NULL
),
losses AS MATERIALIZED (  -- each loss looked up once (the filter below would look it up again)
  SELECT n.trial, n.tensor, n.step, n.mode, n.value AS loss
  FROM selection CROSS JOIN rule_now_reduction_by_tensor n
  WHERE n.tensor = selection.tensor
    AND n.worker = (SELECT worker FROM rule_primary_worker)
    AND n.reduction = 'mean' AND n.abs = 0
),
x AS MATERIALIZED (  -- the batch's losses, numbered per tensor in step order
  SELECT l.*, row_number() OVER (PARTITION BY l.tensor ORDER BY l.step) AS i
  FROM losses l
  WHERE l.loss IS NOT NULL   -- no loss value to fold in: a NaN mean (SQLite's NULL), a string tensor
),
walk(trial, tensor, i, step, mode, train_sum, train_n, eval_sum, eval_n, compared, ratio, counter0) AS (
  SELECT x.trial, x.tensor, 0, s.step, s.mode, ifnull(s.train_sum, 0), ifnull(s.train_n, 0),
         ifnull(s.eval_sum, 0), ifnull(s.eval_n, 0), 0, s.ratio, ifnull(s.counter, 0)
  FROM x
  LEFT JOIN rule_overfit_state s ON s.trial = x.trial AND s.tensor = x.tensor
  WHERE x.i = 1
  UNION ALL
  -- At a TRAIN step the TRAIN block grows (or starts); at an EVAL step the EVAL block does, and
  -- the step is compared when it is at or after start_step and a TRAIN block came before: the
  -- ratio of the EVAL block's mean (this step included) to the TRAIN block's.
  SELECT w.trial, w.tensor, x.i, x.step, x.mode,
         CASE WHEN x.mode = 'TRAIN' THEN (CASE WHEN w.mode = 'TRAIN' THEN w.train_sum ELSE 0 END) + x.loss
              ELSE w.train_sum END,
         CASE WHEN x.mode = 'TRAIN' THEN (CASE WHEN w.mode = 'TRAIN' THEN w.train_n ELSE 0 END) + 1
              ELSE w.train_n END,
         CASE WHEN x.mode = 'EVAL' THEN (CASE WHEN w.mode = 'EVAL' THEN w.eval_sum ELSE 0 END) + x.loss
              ELSE w.eval_sum END,
         CASE WHEN x.mode = 'EVAL' THEN (CASE WHEN w.mode = 'EVAL' THEN w.eval_n ELSE 0 END) + 1
              ELSE w.eval_n END,
         x.mode = 'EVAL' AND x.step >= cfg.start_step AND w.train_n > 0,
         CASE WHEN x.mode = 'EVAL' AND x.step >= cfg.start_step AND w.train_n > 0
              THEN rule_div(((CASE WHEN w.mode = 'EVAL' THEN w.eval_sum ELSE 0 END) + x.loss)
                              / ((CASE WHEN w.mode = 'EVAL' THEN w.eval_n ELSE 0 END) + 1)
                            - w.train_sum / w.train_n,
                            w.train_sum / w.train_n) END,
         w.counter0
  FROM walk w
  JOIN x ON x.tensor = w.tensor AND x.i = w.i + 1
  CROSS JOIN rule_overfit_cfg AS cfg
),
runs AS (  -- a compared step whose ratio is not above the threshold resets the counter
  SELECT walk.*,
         sum(compared AND NOT ifnull(ratio > cfg.ratio_threshold, 0)) OVER (PARTITION BY tensor ORDER BY i) AS resets,
         compared AND ifnull(ratio > cfg.ratio_threshold, 0) AS above
  FROM walk, rule_overfit_cfg AS cfg
  WHERE i > 0
)
SELECT trial, tensor, step, mode, train_sum, train_n, eval_sum, eval_n, ratio,
       CASE WHEN resets = 0 THEN counter0 ELSE 0 END
         + sum(above) OVER (PARTITION BY tensor, resets ORDER BY i) AS counter
FROM runs;

DROP TRIGGER IF EXISTS rule_overfit_fold;
CREATE TRIGGER rule_overfit_fold
AFTER UPDATE OF step ON rule_progress
WHEN new.rule = 'overfit'
BEGIN
  DELETE FROM rule_overfit_walk WHERE trial = new.trial;
  INSERT INTO rule_overfit_walk(trial, tensor, step, mode, train_sum, train_n, eval_sum, eval_n, ratio, counter)
  SELECT trial, tensor, step, mode, train_sum, train_n, eval_sum, eval_n, ratio, counter
  FROM rule_overfit_steps;
  INSERT OR REPLACE INTO rule_overfit_state(trial, tensor, step, mode, train_sum, train_n, eval_sum, eval_n, ratio, counter)
  SELECT w.trial, w.tensor, w.step, w.mode, w.train_sum, w.train_n, w.eval_sum, w.eval_n, w.ratio, w.counter
  FROM rule_overfit_walk w
  WHERE w.trial = new.trial
    AND w.step = (SELECT max(v.step) FROM rule_overfit_walk v WHERE v.trial = w.trial AND v.tensor = w.tensor);
END;

DROP VIEW IF EXISTS rule_overfit;
CREATE VIEW rule_overfit AS
SELECT s.trial, s.step, s.tensor, (SELECT worker FROM rule_primary_worker) AS worker, s.ratio AS value,
       printf('validation loss is %.3g%% above training loss for %d evaluation step(s)',
              100 * s.ratio, s.counter) AS message
FROM rule_batch c
JOIN rule_overfit_walk s ON s.trial = c.trial AND s.step = c.step
CROSS JOIN rule_overfit_cfg AS cfg
WHERE s.mode = 'EVAL' AND s.ratio IS NOT NULL AND s.counter >= cfg.patience;

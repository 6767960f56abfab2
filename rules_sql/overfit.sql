-- overfit [tensor_regex: default collection `losses`; start_step=0, patience=1,
--   ratio_threshold=0.1]
-- Per tensor, walk its saved steps in global order. A TRAIN block is a maximal run of
-- consecutive saved TRAIN steps; an EVAL block likewise. At each EVAL step S with
-- S >= start_step and a TRAIN block before it: train = mean of the latest TRAIN block,
-- val = mean of the current EVAL block so far (up to S), ratio = (val - train) / train.
-- A counter of consecutive such EVAL steps with ratio > ratio_threshold (reset to 0
-- otherwise); finding when counter >= patience. value = ratio. Losses: worker_0's mean value;
-- one that is not a number (a string tensor's, a NaN mean) is not folded in.
--
-- State: per tensor the mode of its last saved step, the sum and length of the latest TRAIN
-- block and of the current EVAL block, and the counter.
INSERT OR REPLACE INTO rule_catalog(rule, kind) VALUES ('overfit', 'step');   -- its state is folded one step at a time

INSERT OR IGNORE INTO rule_params(trial, rule, param, value) VALUES
  (NULL, 'overfit', 'tensor_regex', ''),
  (NULL, 'overfit', 'start_step', '0'),
  (NULL, 'overfit', 'patience', '1'),
  (NULL, 'overfit', 'ratio_threshold', '0.1');

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

DROP VIEW IF EXISTS rule_overfit_next;
CREATE VIEW rule_overfit_next AS
WITH cfg AS (
  SELECT nullif((SELECT value FROM rule_param WHERE rule = 'overfit' AND param = 'tensor_regex'), '') AS tensor_regex,
         rule_real((SELECT value FROM rule_param WHERE rule = 'overfit' AND param = 'start_step')) AS start_step,
         rule_real((SELECT value FROM rule_param WHERE rule = 'overfit' AND param = 'ratio_threshold')) AS ratio_threshold
),
x AS MATERIALIZED (
  SELECT n.trial, n.tensor, n.step, n.mode, tensor_reduce(n.real_value, 'mean') AS loss
  FROM rule_now_primary n, cfg
  WHERE n.real_value IS NOT NULL   -- a loss is a number: a string tensor is not one
    AND n.tensor IN (SELECT tensor FROM rule_selected_tensors WHERE rule = 'overfit' AND cfg.tensor_regex IS NOT NULL
                     UNION ALL
                     SELECT tensor FROM rule_collections WHERE collection = 'losses' AND cfg.tensor_regex IS NULL)
),
b AS (  -- the blocks after this step
  SELECT x.trial, x.tensor, x.step, x.mode, x.loss, s.counter,
         CASE WHEN x.mode = 'TRAIN' THEN (CASE WHEN s.mode = 'TRAIN' THEN s.train_sum ELSE 0 END) + x.loss
              ELSE ifnull(s.train_sum, 0) END AS train_sum,
         CASE WHEN x.mode = 'TRAIN' THEN (CASE WHEN s.mode = 'TRAIN' THEN s.train_n ELSE 0 END) + 1
              ELSE ifnull(s.train_n, 0) END AS train_n,
         CASE WHEN x.mode = 'EVAL' THEN (CASE WHEN s.mode = 'EVAL' THEN s.eval_sum ELSE 0 END) + x.loss
              ELSE ifnull(s.eval_sum, 0) END AS eval_sum,
         CASE WHEN x.mode = 'EVAL' THEN (CASE WHEN s.mode = 'EVAL' THEN s.eval_n ELSE 0 END) + 1
              ELSE ifnull(s.eval_n, 0) END AS eval_n
  FROM x
  LEFT JOIN rule_overfit_state s ON s.trial = x.trial AND s.tensor = x.tensor
  WHERE x.loss IS NOT NULL   -- a NaN mean (SQLite's NULL) is no loss value to fold in
),
r AS (
  SELECT b.*, CASE WHEN b.mode = 'EVAL' AND b.step >= cfg.start_step AND b.train_n > 0
                   THEN rule_div(b.eval_sum / b.eval_n - b.train_sum / b.train_n, b.train_sum / b.train_n)
              END AS ratio,
         (b.mode = 'EVAL' AND b.step >= cfg.start_step AND b.train_n > 0) AS compared
  FROM b, cfg
)
SELECT r.trial, r.tensor, r.step, r.mode, r.train_sum, r.train_n, r.eval_sum, r.eval_n, r.ratio,
       CASE WHEN NOT r.compared THEN ifnull(r.counter, 0)
            WHEN r.ratio > cfg.ratio_threshold THEN ifnull(r.counter, 0) + 1
            ELSE 0 END AS counter
FROM r, cfg;

DROP TRIGGER IF EXISTS rule_overfit_fold;
CREATE TRIGGER rule_overfit_fold
AFTER UPDATE OF step ON rule_progress
WHEN new.rule = 'overfit'
BEGIN
  INSERT OR REPLACE INTO rule_overfit_state
    (trial, tensor, step, mode, train_sum, train_n, eval_sum, eval_n, ratio, counter)
  SELECT trial, tensor, step, mode, train_sum, train_n, eval_sum, eval_n, ratio, counter
  FROM rule_overfit_next;
END;

DROP VIEW IF EXISTS rule_overfit;
CREATE VIEW rule_overfit AS
WITH cfg AS (
  SELECT rule_real((SELECT value FROM rule_param WHERE rule = 'overfit' AND param = 'patience')) AS patience
)
SELECT s.trial, s.step, s.tensor, 'worker_0' AS worker, s.ratio AS value,
       printf('validation loss is %.3g%% above training loss for %d evaluation step(s)',
              100 * s.ratio, s.counter) AS message
FROM rule_batch c
JOIN rule_overfit_state s ON s.trial = c.trial AND s.step = c.step
CROSS JOIN cfg
WHERE s.mode = 'EVAL' AND s.ratio IS NOT NULL AND s.counter >= cfg.patience;

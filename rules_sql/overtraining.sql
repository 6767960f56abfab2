-- overtraining [patience_train=5, patience_validation=10, delta=0.1]
-- Per tensor of `losses`, separately for TRAIN and EVAL: the first value sets best (counter
-- 0); a value below best - delta is an improvement (best = value, counter 0), any other adds
-- 1 to that mode's counter. Finding at a TRAIN or EVAL step when counter(TRAIN) >=
-- patience_train and counter(EVAL) >= patience_validation (both modes seen).
-- value = counter(EVAL). Losses: worker_0's mean value.
--
-- State: per tensor, best and counter of each mode.
INSERT OR REPLACE INTO rule_catalog(rule, kind) VALUES ('overtraining', 'step');   -- its state is folded one step at a time

INSERT OR IGNORE INTO rule_params(trial, rule, param, value) VALUES
  (NULL, 'overtraining', 'patience_train', '5'),
  (NULL, 'overtraining', 'patience_validation', '10'),
  (NULL, 'overtraining', 'delta', '0.1');

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

DROP VIEW IF EXISTS rule_overtraining_next;
CREATE VIEW rule_overtraining_next AS
WITH cfg AS (
  SELECT rule_real((SELECT value FROM rule_param WHERE rule = 'overtraining' AND param = 'delta')) AS delta
),
x AS MATERIALIZED (
  SELECT n.trial, n.tensor, n.step, n.mode, tensor_reduce(n.value, 'mean') AS loss
  FROM rule_now_primary n
  WHERE n.mode IN ('TRAIN', 'EVAL')
    AND n.tensor IN (SELECT tensor FROM rule_collections WHERE collection = 'losses')
)
SELECT x.trial, x.tensor, x.step,
       CASE WHEN x.mode <> 'TRAIN' THEN s.train_best
            WHEN s.train_best IS NULL OR x.loss < s.train_best - cfg.delta THEN x.loss
            ELSE s.train_best END AS train_best,
       CASE WHEN x.mode <> 'TRAIN' THEN ifnull(s.train_count, 0)
            WHEN s.train_best IS NULL OR x.loss < s.train_best - cfg.delta THEN 0
            ELSE s.train_count + 1 END AS train_count,
       CASE WHEN x.mode <> 'EVAL' THEN s.eval_best
            WHEN s.eval_best IS NULL OR x.loss < s.eval_best - cfg.delta THEN x.loss
            ELSE s.eval_best END AS eval_best,
       CASE WHEN x.mode <> 'EVAL' THEN ifnull(s.eval_count, 0)
            WHEN s.eval_best IS NULL OR x.loss < s.eval_best - cfg.delta THEN 0
            ELSE s.eval_count + 1 END AS eval_count
FROM x
CROSS JOIN cfg
LEFT JOIN rule_overtraining_state s ON s.trial = x.trial AND s.tensor = x.tensor
WHERE x.loss IS NOT NULL;

DROP TRIGGER IF EXISTS rule_overtraining_fold;
CREATE TRIGGER rule_overtraining_fold
AFTER UPDATE OF step ON rule_progress
WHEN new.rule = 'overtraining'
BEGIN
  INSERT OR REPLACE INTO rule_overtraining_state
    (trial, tensor, step, train_best, train_count, eval_best, eval_count)
  SELECT trial, tensor, step, train_best, train_count, eval_best, eval_count
  FROM rule_overtraining_next;
END;

DROP VIEW IF EXISTS rule_overtraining;
CREATE VIEW rule_overtraining AS
WITH cfg AS (
  SELECT rule_real((SELECT value FROM rule_param WHERE rule = 'overtraining' AND param = 'patience_train')) AS patience_train,
         rule_real((SELECT value FROM rule_param WHERE rule = 'overtraining' AND param = 'patience_validation')) AS patience_validation
)
SELECT s.trial, s.step, s.tensor, 'worker_0' AS worker, s.eval_count AS value,
       printf('no improvement for %d training and %d validation steps', s.train_count, s.eval_count) AS message
FROM rule_batch c
JOIN rule_overtraining_state s ON s.trial = c.trial AND s.step = c.step
CROSS JOIN cfg
WHERE s.train_best IS NOT NULL AND s.eval_best IS NOT NULL
  AND s.train_count >= cfg.patience_train AND s.eval_count >= cfg.patience_validation;

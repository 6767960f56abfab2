-- weight_update_ratio [num_steps=none, large_threshold=10, small_threshold=1e-8, epsilon=1e-9]
-- Tensors of `weights`. Steps considered: the TRAIN steps if the trial has any, else all steps.
-- At such a step S where the tensor is saved, P = the previous considered step where it is
-- saved (none: skip; num_steps set and P < S - num_steps: skip).
-- ratio = ||v_S - v_P|| / (||v_P|| + epsilon); finding when ratio > large_threshold or
-- ratio < small_threshold. value = ratio.
--
-- State: per (tensor, worker) the last considered value. A trial is known to "have TRAIN
-- steps" from its first TRAIN step on; at that step the state and the findings made at earlier
-- non-TRAIN steps are dropped, so once the trial has ended the findings are exactly the
-- definition's.
INSERT OR REPLACE INTO rule_catalog(rule, kind) VALUES ('weight_update_ratio', 'step');   -- its state is folded one step at a time

INSERT OR IGNORE INTO rule_params(trial, rule, param, value) VALUES
  (NULL, 'weight_update_ratio', 'num_steps', 'none'),
  (NULL, 'weight_update_ratio', 'large_threshold', '10'),
  (NULL, 'weight_update_ratio', 'small_threshold', '1e-8'),
  (NULL, 'weight_update_ratio', 'epsilon', '1e-9');

CREATE TABLE IF NOT EXISTS rule_weight_update_ratio_trial (
  trial      TEXT PRIMARY KEY,
  train_seen INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS rule_weight_update_ratio_state (
  trial  TEXT NOT NULL,
  tensor TEXT NOT NULL,
  worker TEXT NOT NULL,
  step   INTEGER NOT NULL,   -- the last considered step where the tensor was saved
  value  BLOB NOT NULL,      -- its value there
  p_step INTEGER,            -- the step before that (P), and the ratio at `step`
  ratio  REAL,
  PRIMARY KEY (trial, tensor, worker)
) WITHOUT ROWID;

-- The weights saved at the cursor step, if the step is considered, with their P.
DROP VIEW IF EXISTS rule_weight_update_ratio_next;
CREATE VIEW rule_weight_update_ratio_next AS
WITH cfg AS (
  SELECT rule_real((SELECT value FROM rule_param WHERE rule = 'weight_update_ratio' AND param = 'num_steps')) AS num_steps,
         rule_real((SELECT value FROM rule_param WHERE rule = 'weight_update_ratio' AND param = 'epsilon')) AS epsilon
)
SELECT n.trial, n.tensor, n.worker, n.step, n.value,
       p.step AS p_step,
       -- No ratio when the shapes differ or either value is not real numbers (strings, complex).
       CASE WHEN p.step IS NOT NULL AND (cfg.num_steps IS NULL OR p.step >= n.step - cfg.num_steps)
                 AND tensor_shape(n.real_value) = tensor_shape(p.value)
                 AND tensor_dtype(p.value) NOT IN ('string', 'complex64', 'complex128')
            THEN tensor_diff_norm(n.real_value, p.value) / (tensor_reduce(p.value, 'l2') + cfg.epsilon)
       END AS ratio
FROM rule_now n
CROSS JOIN cfg
LEFT JOIN rule_weight_update_ratio_trial t ON t.trial = n.trial
LEFT JOIN rule_weight_update_ratio_state p
  ON p.trial = n.trial AND p.tensor = n.tensor AND p.worker = n.worker
WHERE (n.mode = 'TRAIN' OR ifnull(t.train_seen, 0) = 0)
  AND n.tensor IN (SELECT tensor FROM rule_collections WHERE collection = 'weights');

DROP TRIGGER IF EXISTS rule_weight_update_ratio_fold;
CREATE TRIGGER rule_weight_update_ratio_fold
AFTER UPDATE OF step ON rule_progress
WHEN new.rule = 'weight_update_ratio'
BEGIN
  -- First TRAIN step: only TRAIN steps count from now on, and retroactively.
  DELETE FROM rule_weight_update_ratio_state
  WHERE trial = new.trial
    AND (SELECT mode FROM rule_batch) = 'TRAIN'
    AND NOT EXISTS (SELECT 1 FROM rule_weight_update_ratio_trial WHERE trial = new.trial AND train_seen);
  DELETE FROM rule_finding
  WHERE trial = new.trial AND rule = 'weight_update_ratio' AND mode <> 'TRAIN'
    AND (SELECT mode FROM rule_batch) = 'TRAIN'
    AND NOT EXISTS (SELECT 1 FROM rule_weight_update_ratio_trial WHERE trial = new.trial AND train_seen);
  INSERT OR REPLACE INTO rule_weight_update_ratio_trial(trial, train_seen)
  SELECT new.trial, (SELECT mode FROM rule_batch) = 'TRAIN' OR ifnull(
           (SELECT train_seen FROM rule_weight_update_ratio_trial WHERE trial = new.trial), 0);
  INSERT OR REPLACE INTO rule_weight_update_ratio_state(trial, tensor, worker, step, value, p_step, ratio)
  SELECT trial, tensor, worker, step, value, p_step, ratio FROM rule_weight_update_ratio_next;
END;

DROP VIEW IF EXISTS rule_weight_update_ratio;
CREATE VIEW rule_weight_update_ratio AS
WITH cfg AS (
  SELECT rule_real((SELECT value FROM rule_param WHERE rule = 'weight_update_ratio' AND param = 'large_threshold')) AS large,
         rule_real((SELECT value FROM rule_param WHERE rule = 'weight_update_ratio' AND param = 'small_threshold')) AS small
)
SELECT s.trial, s.step, s.tensor, s.worker, s.ratio AS value,
       printf('update ratio %g since step %d is %s threshold %g', s.ratio, s.p_step,
              CASE WHEN s.ratio > cfg.large THEN 'above the large' ELSE 'below the small' END,
              CASE WHEN s.ratio > cfg.large THEN cfg.large ELSE cfg.small END) AS message
FROM rule_batch c
JOIN rule_weight_update_ratio_state s ON s.trial = c.trial AND s.step = c.step
CROSS JOIN cfg
WHERE s.ratio > cfg.large OR s.ratio < cfg.small;

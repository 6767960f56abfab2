-- @rule weight_update_ratio batch
-- @param num_steps       integer|none none skip a step whose previous considered step is more than this many steps before it
-- @param large_threshold real         10   an update ratio above this is a finding
-- @param small_threshold real         1e-8 an update ratio below this is a finding
-- @param epsilon         real         1e-9 added to the weight norm the update is divided by
--
-- Tensors of `weights`. Steps considered: the TRAIN steps if the trial has any, else all steps.
-- At such a step S where the tensor is saved, P = the previous considered step where it is
-- saved (none: skip; num_steps set and P < S - num_steps: skip).
-- ratio = ||v_S - v_P|| / (||v_P|| + epsilon); finding when ratio > large_threshold or
-- ratio < small_threshold. value = ratio.
--
-- State: per (tensor, worker) the last considered value. A trial is known to "have TRAIN
-- steps" from its first TRAIN step on; at that step the state and the findings made at earlier
-- non-TRAIN steps are dropped, so once the trial has ended the findings are exactly the
-- definition's. A batch pairs each considered value with the one before it (the state's or the
-- batch's); the pairs' ratios are kept until the next batch, for the findings.
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

CREATE TABLE IF NOT EXISTS rule_weight_update_ratio_walk (
  trial  TEXT NOT NULL,
  tensor TEXT NOT NULL,
  worker TEXT NOT NULL,
  step   INTEGER NOT NULL,   -- a considered step of the last batch where the tensor was saved
  p_step INTEGER,            -- P, and the ratio at `step`
  ratio  REAL,
  PRIMARY KEY (trial, tensor, worker, step)
) WITHOUT ROWID;

-- The weights saved at the batch's considered steps, each with its P and ratio. The state's
-- values count unless the batch brings the trial's first TRAIN step.
DROP VIEW IF EXISTS rule_weight_update_ratio_next;
DROP VIEW IF EXISTS rule_weight_update_ratio_steps;
CREATE VIEW rule_weight_update_ratio_steps AS
WITH t AS (
  SELECT ifnull((SELECT train_seen FROM rule_weight_update_ratio_trial WHERE trial = b.trial), 0) AS train_seen,
         EXISTS (SELECT 1 FROM rule_batch WHERE mode = 'TRAIN') AS batch_train
  FROM (SELECT trial FROM rule_batch LIMIT 1) b
),
selection AS MATERIALIZED (
  SELECT tensor FROM rule_collections WHERE collection = 'weights'
),
x AS MATERIALIZED (  -- the considered saved steps: the state's (0) and the batch's (1)
  SELECT s.trial, s.tensor, s.worker, s.step, 0 AS new,
         NULL AS dtype, NULL AS shape, NULL AS value_inline, NULL AS value_id, NULL AS l2
  FROM rule_weight_update_ratio_state s, t
  WHERE s.trial = (SELECT trial FROM rule_batch LIMIT 1) AND (t.train_seen OR NOT t.batch_train)
  UNION ALL
  SELECT n.trial, n.tensor, n.worker, n.step, 1, n.dtype, n.shape, n.value_inline, n.value_id, n.value
  FROM selection CROSS JOIN rule_now_reduction_by_tensor n, t
  WHERE n.tensor = selection.tensor
    AND n.reduction = 'l2' AND n.abs = 0
    AND (n.mode = 'TRAIN' OR NOT (t.train_seen OR t.batch_train))
),
l AS MATERIALIZED (  -- each with the step before it (P) and what the pair needs of P's value
  SELECT x.*, lag(x.step) OVER series AS p_step, lag(x.new) OVER series AS p_new,
         lag(x.dtype) OVER series AS p_dtype, lag(x.shape) OVER series AS p_shape,
         lag(x.value_inline) OVER series AS p_value_inline, lag(x.value_id) OVER series AS p_value_id,
         lag(x.l2) OVER series AS p_l2
  FROM x
  WINDOW series AS (PARTITION BY x.tensor, x.worker ORDER BY x.step)
),
pairs AS (  -- the batch's steps with a P near enough
  SELECT l.*, cfg.epsilon
  FROM l, rule_weight_update_ratio_cfg AS cfg
  WHERE l.new AND l.p_step IS NOT NULL AND (cfg.num_steps IS NULL OR l.p_step >= l.step - cfg.num_steps)
)
-- No ratio when the shapes differ or either value is not real numbers (strings, complex). The
-- values of the batch come with their shapes, dtypes and l2 norms (rule_now_reduction_by_tensor:
-- the l2 the ingest computed from the elements where there is one, the same number as
-- tensor_reduce's) and where their blobs are, so that a pair reads its two blobs once, where the
-- difference is taken, and looks nothing up by name (a 0-d value's shape column says [1], its
-- blob []). The state's value, from an earlier batch, is reduced from its copy.
SELECT l.trial, l.tensor, l.worker, l.step, l.p_step, NULL AS ratio
FROM l, rule_weight_update_ratio_cfg AS cfg
WHERE l.new AND NOT (l.p_step IS NOT NULL AND (cfg.num_steps IS NULL OR l.p_step >= l.step - cfg.num_steps))
UNION ALL
SELECT p.trial, p.tensor, p.worker, p.step, p.p_step,
       CASE WHEN p.dtype NOT IN ('string', 'complex64', 'complex128')
             AND p.p_dtype NOT IN ('string', 'complex64', 'complex128')
             AND CASE WHEN p.shape = '[1]' OR p.p_shape = '[1]'
                      THEN tensor_shape(coalesce(p.value_inline, a.data))
                             = tensor_shape(coalesce(p.p_value_inline, b.data))
                      ELSE p.shape = p.p_shape END
            THEN tensor_diff_norm(coalesce(p.value_inline, a.data), coalesce(p.p_value_inline, b.data))
                   / (p.p_l2 + p.epsilon) END
FROM pairs p
LEFT JOIN value_blob a ON a.value_id = p.value_id
LEFT JOIN value_blob b ON b.value_id = p.p_value_id
WHERE p.p_new
UNION ALL
SELECT p.trial, p.tensor, p.worker, p.step, p.p_step,
       CASE WHEN p.dtype NOT IN ('string', 'complex64', 'complex128')
             AND tensor_dtype(s.value) NOT IN ('string', 'complex64', 'complex128')
             AND tensor_shape(coalesce(p.value_inline, a.data)) = tensor_shape(s.value)
            THEN tensor_diff_norm(coalesce(p.value_inline, a.data), s.value)
                   / (tensor_reduce(s.value, 'l2') + p.epsilon) END
FROM pairs p
JOIN rule_weight_update_ratio_state s ON s.trial = p.trial AND s.tensor = p.tensor AND s.worker = p.worker
LEFT JOIN value_blob a ON a.value_id = p.value_id
WHERE NOT p.p_new;

DROP TRIGGER IF EXISTS rule_weight_update_ratio_fold;
CREATE TRIGGER rule_weight_update_ratio_fold
AFTER UPDATE OF step ON rule_progress
WHEN new.rule = 'weight_update_ratio'
BEGIN
  DELETE FROM rule_weight_update_ratio_walk WHERE trial = new.trial;
  INSERT INTO rule_weight_update_ratio_walk(trial, tensor, worker, step, p_step, ratio)
  SELECT trial, tensor, worker, step, p_step, ratio FROM rule_weight_update_ratio_steps;
  -- The trial's first TRAIN step: only TRAIN steps count from now on, and retroactively.
  DELETE FROM rule_weight_update_ratio_state
  WHERE trial = new.trial
    AND EXISTS (SELECT 1 FROM rule_batch WHERE mode = 'TRAIN')
    AND NOT EXISTS (SELECT 1 FROM rule_weight_update_ratio_trial WHERE trial = new.trial AND train_seen);
  DELETE FROM rule_finding
  WHERE trial = new.trial AND rule = 'weight_update_ratio' AND mode <> 'TRAIN'
    AND EXISTS (SELECT 1 FROM rule_batch WHERE mode = 'TRAIN')
    AND NOT EXISTS (SELECT 1 FROM rule_weight_update_ratio_trial WHERE trial = new.trial AND train_seen);
  INSERT OR REPLACE INTO rule_weight_update_ratio_trial(trial, train_seen)
  SELECT new.trial, EXISTS (SELECT 1 FROM rule_batch WHERE mode = 'TRAIN') OR ifnull(
           (SELECT train_seen FROM rule_weight_update_ratio_trial WHERE trial = new.trial), 0);
  -- Each series' last considered value.
  INSERT OR REPLACE INTO rule_weight_update_ratio_state(trial, tensor, worker, step, value, p_step, ratio)
  SELECT w.trial, w.tensor, w.worker, w.step, n.value, w.p_step, w.ratio
  FROM rule_weight_update_ratio_walk w
  JOIN rule_now n ON n.step = w.step AND n.tensor = w.tensor AND n.worker = w.worker
  WHERE w.trial = new.trial
    AND w.step = (SELECT max(v.step) FROM rule_weight_update_ratio_walk v
                  WHERE v.trial = w.trial AND v.tensor = w.tensor AND v.worker = w.worker);
END;

DROP VIEW IF EXISTS rule_weight_update_ratio;
CREATE VIEW rule_weight_update_ratio AS
SELECT s.trial, s.step, s.tensor, s.worker, s.ratio AS value,
       printf('update ratio %g since step %d is %s threshold %g', s.ratio, s.p_step,
              CASE WHEN s.ratio > cfg.large_threshold THEN 'above the large' ELSE 'below the small' END,
              CASE WHEN s.ratio > cfg.large_threshold THEN cfg.large_threshold ELSE cfg.small_threshold END) AS message
FROM rule_batch c
JOIN rule_weight_update_ratio_walk s ON s.trial = c.trial AND s.step = c.step
CROSS JOIN rule_weight_update_ratio_cfg AS cfg
WHERE s.ratio > cfg.large_threshold OR s.ratio < cfg.small_threshold;

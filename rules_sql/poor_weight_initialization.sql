-- poor_weight_initialization [activation_inputs_regex=".*relu_input", threshold=10.0,
--   distribution_range=0.001, patience=5, steps=10]
-- Only at the first `steps` complete steps. At S, three checks, each a finding with its label
-- as tensor (values of worker_0):
--   activation_variance_ratio: over matching tensors at S, at least two, min var > 0,
--     max var / min var > threshold. value = that ratio.
--   gradient_distribution: over `gradients` tensors at S, min of (p95 - p5) <
--     distribution_range. value = that minimum. Percentiles from rule_now_distribution.
--   loss: the first tensor (by name) of `losses`, appended at each considered TRAIN or GLOBAL
--     step where saved; finding when it has more than `patience` values and the newest >= the
--     one `patience` values before it. value = the newest.
--
-- State: the number of complete steps seen, and the loss values appended (at most `steps`). A
-- batch's steps are numbered on from that count, so only its first few are looked at.
INSERT OR IGNORE INTO rule_param(trial, rule, param, value) VALUES
  (NULL, 'poor_weight_initialization', 'activation_inputs_regex', '.*relu_input'),
  (NULL, 'poor_weight_initialization', 'threshold', '10.0'),
  (NULL, 'poor_weight_initialization', 'distribution_range', '0.001'),
  (NULL, 'poor_weight_initialization', 'patience', '5'),
  (NULL, 'poor_weight_initialization', 'steps', '10');

-- The rule's parameters in effect for the batch's trial, one typed column each.
DROP VIEW IF EXISTS rule_poor_weight_initialization_cfg;
CREATE VIEW rule_poor_weight_initialization_cfg AS
SELECT nullif(max(value) FILTER (WHERE param = 'activation_inputs_regex'), '') AS activation_inputs_regex,
       rule_real(max(value) FILTER (WHERE param = 'threshold')) AS threshold,
       rule_real(max(value) FILTER (WHERE param = 'distribution_range')) AS distribution_range,
       CAST(rule_real(max(value) FILTER (WHERE param = 'patience')) AS INTEGER) AS patience,
       rule_real(max(value) FILTER (WHERE param = 'steps')) AS steps
FROM rule_params
WHERE rule = 'poor_weight_initialization';

CREATE TABLE IF NOT EXISTS rule_poor_weight_initialization_state (
  trial TEXT PRIMARY KEY,
  steps INTEGER NOT NULL           -- complete steps seen, the batch's included
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS rule_poor_weight_initialization_loss (
  trial TEXT NOT NULL,
  k     INTEGER NOT NULL,          -- 1, 2, ... in step order
  step  INTEGER NOT NULL,
  loss  REAL,
  PRIMARY KEY (trial, k)
) WITHOUT ROWID;

-- The batch's steps among the trial's first `steps` (the state counts the batch already).
DROP VIEW IF EXISTS rule_poor_weight_initialization_considered;
CREATE VIEW rule_poor_weight_initialization_considered AS
SELECT b.trial, b.step, b.mode
FROM (SELECT b.*, row_number() OVER (ORDER BY b.step) AS i FROM rule_batch b) b
JOIN rule_poor_weight_initialization_state s ON s.trial = b.trial
WHERE s.steps - (SELECT count(*) FROM rule_batch) + b.i
      <= (SELECT steps FROM rule_poor_weight_initialization_cfg);

DROP TRIGGER IF EXISTS rule_poor_weight_initialization_fold;
CREATE TRIGGER rule_poor_weight_initialization_fold
AFTER UPDATE OF step ON rule_progress
WHEN new.rule = 'poor_weight_initialization'
BEGIN
  INSERT OR REPLACE INTO rule_poor_weight_initialization_state(trial, steps)
  SELECT new.trial, ifnull((SELECT steps FROM rule_poor_weight_initialization_state
                            WHERE trial = new.trial), 0) + (SELECT count(*) FROM rule_batch);
  INSERT INTO rule_poor_weight_initialization_loss(trial, k, step, loss)
  SELECT n.trial,
         ifnull((SELECT max(k) FROM rule_poor_weight_initialization_loss WHERE trial = n.trial), 0)
           + row_number() OVER (ORDER BY n.step),
         n.step, tensor_reduce(n.value, 'mean')
  FROM rule_poor_weight_initialization_considered c
  JOIN rule_now_primary n ON n.step = c.step
  WHERE c.mode IN ('TRAIN', 'GLOBAL')
    AND n.tensor = (SELECT min(tensor) FROM rule_collections WHERE collection = 'losses');
END;

DROP VIEW IF EXISTS rule_poor_weight_initialization;
CREATE VIEW rule_poor_weight_initialization AS
WITH considered AS MATERIALIZED (
  SELECT trial, step FROM rule_poor_weight_initialization_considered
),
acts AS MATERIALIZED (  -- the matching activations' variances (selected before any value is read)
  SELECT n.step, tensor_reduce(n.value, 'variance') AS var
  FROM considered c
  JOIN rule_now_primary n ON n.step = c.step
  WHERE n.tensor IN (SELECT t.tensor FROM tensors t, rule_poor_weight_initialization_cfg AS cfg
                     WHERE t.trial = c.trial AND rule_regexp_any(cfg.activation_inputs_regex, t.tensor))
),
act AS (
  SELECT step, count(*) AS n, min(var) AS min_var, max(var) AS max_var FROM acts WHERE var IS NOT NULL GROUP BY step
),
grad AS (
  -- numpy.percentile (not nanpercentile): a gradient with a NaN has no spread
  SELECT c.step, min(CASE WHEN n.nan = 0 THEN n.p95 - n.p5 END) AS min_spread
  FROM considered c
  JOIN rule_now_distribution n ON n.step = c.step
  WHERE n.worker = (SELECT worker FROM rule_primary_worker)
    AND n.tensor IN (SELECT tensor FROM rule_collections WHERE collection = 'gradients')
  GROUP BY c.step
),
loss AS (
  SELECT l.step, l.loss, p.loss AS before
  FROM considered c
  JOIN rule_poor_weight_initialization_loss l ON l.trial = c.trial AND l.step = c.step
  CROSS JOIN rule_poor_weight_initialization_cfg AS cfg
  JOIN rule_poor_weight_initialization_loss p ON p.trial = l.trial AND p.k = l.k - cfg.patience
)
SELECT c.trial, c.step, 'activation_variance_ratio' AS tensor, 'worker_0' AS worker,
       act.max_var / act.min_var AS value,
       printf('activation variances differ by a factor %g over %d layers', act.max_var / act.min_var, act.n) AS message
FROM considered c
JOIN act ON act.step = c.step
CROSS JOIN rule_poor_weight_initialization_cfg AS cfg
WHERE act.n >= 2 AND act.min_var > 0 AND act.max_var / act.min_var > cfg.threshold
UNION ALL
SELECT c.trial, c.step, 'gradient_distribution', 'worker_0', grad.min_spread,
       printf('a gradient''s 5th..95th percentile range is only %g', grad.min_spread)
FROM considered c
JOIN grad ON grad.step = c.step
CROSS JOIN rule_poor_weight_initialization_cfg AS cfg
WHERE grad.min_spread < cfg.distribution_range
UNION ALL
SELECT c.trial, c.step, 'loss', 'worker_0', loss.loss,
       printf('loss %g is not below %g of %d loss values before', loss.loss, loss.before, cfg.patience)
FROM considered c
JOIN loss ON loss.step = c.step
CROSS JOIN rule_poor_weight_initialization_cfg AS cfg
WHERE loss.loss >= loss.before;

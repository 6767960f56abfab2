-- @rule poor_weight_initialization batch
-- @param activation_inputs_regex regex   .*relu_input the activation inputs whose variances are compared
-- @param threshold               real    10.0         largest / smallest activation input variance above which a step is a finding
-- @param distribution_range      real    0.001        a gradient p95 - p5 below this is a finding
-- @param patience                integer 5            losses back that the newest loss must be below
-- @param steps                   integer 10           the first complete steps checked
--
-- Only at the first `steps` complete steps. At S, three checks, each a finding with its label
-- as tensor (values of the primary worker):
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
         n.step, n.value
  FROM rule_poor_weight_initialization_considered c
  JOIN rule_now_primary_reduction n ON n.step = c.step
  WHERE n.reduction = 'mean' AND n.abs = 0
    AND c.mode IN ('TRAIN', 'GLOBAL')
    AND n.tensor = (SELECT min(tensor) FROM rule_collections WHERE collection = 'losses');
END;

DROP VIEW IF EXISTS rule_poor_weight_initialization;
CREATE VIEW rule_poor_weight_initialization AS
WITH considered AS MATERIALIZED (
  SELECT trial, step FROM rule_poor_weight_initialization_considered
),
matching AS MATERIALIZED (  -- the activation inputs, each name matched once per batch
  SELECT t.tensor
  FROM tensors t, rule_poor_weight_initialization_cfg AS cfg
  WHERE t.trial = (SELECT trial FROM rule_batch LIMIT 1)
    AND rule_regexp_any(cfg.activation_inputs_regex, t.tensor)
),
acts AS MATERIALIZED (  -- the matching activations' variances (selected before any value is read)
  SELECT n.step, n.value AS var
  FROM considered c
  JOIN rule_now_primary_reduction n ON n.step = c.step
  WHERE n.reduction = 'variance' AND n.abs = 0
    AND n.tensor IN (SELECT tensor FROM matching)
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
SELECT c.trial, c.step, 'activation_variance_ratio' AS tensor, (SELECT worker FROM rule_primary_worker) AS worker,
       act.max_var / act.min_var AS value,
       printf('activation variances differ by a factor %g over %d layers', act.max_var / act.min_var, act.n) AS message
FROM considered c
JOIN act ON act.step = c.step
CROSS JOIN rule_poor_weight_initialization_cfg AS cfg
WHERE act.n >= 2 AND act.min_var > 0 AND act.max_var / act.min_var > cfg.threshold
UNION ALL
SELECT c.trial, c.step, 'gradient_distribution', (SELECT worker FROM rule_primary_worker), grad.min_spread,
       printf('a gradient''s 5th..95th percentile range is only %g', grad.min_spread)
FROM considered c
JOIN grad ON grad.step = c.step
CROSS JOIN rule_poor_weight_initialization_cfg AS cfg
WHERE grad.min_spread < cfg.distribution_range
UNION ALL
SELECT c.trial, c.step, 'loss', (SELECT worker FROM rule_primary_worker), loss.loss,
       printf('loss %g is not below %g of %d loss values before', loss.loss, loss.before, cfg.patience)
FROM considered c
JOIN loss ON loss.step = c.step
CROSS JOIN rule_poor_weight_initialization_cfg AS cfg
WHERE loss.loss >= loss.before;

-- @rule vanishing_gradient batch
-- @param threshold real 1e-7 a gradient whose mean |v| is below this is vanishing
--
-- Tensors of collection `gradients`: a finding per (tensor, worker) with mean(|v|) < threshold.
-- value = mean(|v|).
DROP VIEW IF EXISTS rule_vanishing_gradient;
CREATE VIEW rule_vanishing_gradient AS
WITH selection AS MATERIALIZED (
  SELECT tensor FROM rule_collections WHERE collection = 'gradients'
),
g AS MATERIALIZED (
  SELECT n.trial, n.step, n.tensor, n.worker, n.value AS mean_abs
  FROM selection CROSS JOIN rule_now_reduction_by_tensor n
  WHERE n.tensor = selection.tensor
    AND n.reduction = 'mean' AND n.abs = 1
)
SELECT g.trial, g.step, g.tensor, g.worker, g.mean_abs AS value,
       printf('mean |gradient| %g is below threshold %g', g.mean_abs, cfg.threshold) AS message
FROM g, rule_vanishing_gradient_cfg AS cfg
WHERE g.mean_abs < cfg.threshold;

-- @rule dead_relu batch
-- @param tensor_regex         regex .*relu_output the ReLU outputs checked
-- @param threshold_inactivity real  1.0           percentage of active batch entries below which a unit is dead
-- @param threshold_layer      real  50.0          percentage of dead units above which a tensor is a finding
--
-- Units: if v has >= 2 dims, axis 0 is the batch and each position of the other axes is a
-- unit; else v is one unit. activity(unit) = 100 * fraction of its batch entries > 0.
-- Finding when 100 * (units with activity < threshold_inactivity) / units > threshold_layer.
-- value = that percentage.
DROP VIEW IF EXISTS rule_dead_relu;
CREATE VIEW rule_dead_relu AS
WITH selection AS MATERIALIZED (
  SELECT tensor FROM rule_selected_tensors WHERE rule = 'dead_relu'
),
x AS MATERIALIZED (
  -- active: x > 0 (no upper bound)
  SELECT n.trial, n.step, n.tensor, n.worker,
         rule_inactive_units(n.value, 0, NULL, cfg.threshold_inactivity) AS pct
  FROM selection CROSS JOIN rule_now_by_tensor n, rule_dead_relu_cfg AS cfg
  WHERE n.tensor = selection.tensor
)
SELECT trial, step, tensor, worker, pct AS value,
       printf('%g%% of the units are inactive (threshold %g%%)', pct, cfg.threshold_layer) AS message
FROM x, rule_dead_relu_cfg AS cfg
WHERE pct > cfg.threshold_layer;

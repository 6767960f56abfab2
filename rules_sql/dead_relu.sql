-- dead_relu [tensor_regex=".*relu_output", threshold_inactivity=1.0, threshold_layer=50.0]
-- Units: if v has >= 2 dims, axis 0 is the batch and each position of the other axes is a
-- unit; else v is one unit. activity(unit) = 100 * fraction of its batch entries > 0.
-- Finding when 100 * (units with activity < threshold_inactivity) / units > threshold_layer.
-- value = that percentage.
INSERT OR IGNORE INTO rule_param(trial, rule, param, value) VALUES
  (NULL, 'dead_relu', 'tensor_regex', '.*relu_output'),
  (NULL, 'dead_relu', 'threshold_inactivity', '1.0'),
  (NULL, 'dead_relu', 'threshold_layer', '50.0');

-- The rule's parameters in effect for the batch's trial, one typed column each.
DROP VIEW IF EXISTS rule_dead_relu_cfg;
CREATE VIEW rule_dead_relu_cfg AS
SELECT rule_real(max(value) FILTER (WHERE param = 'threshold_inactivity')) AS threshold_inactivity,
       rule_real(max(value) FILTER (WHERE param = 'threshold_layer')) AS threshold_layer
FROM rule_params
WHERE rule = 'dead_relu';

DROP VIEW IF EXISTS rule_dead_relu;
CREATE VIEW rule_dead_relu AS
WITH x AS MATERIALIZED (
  -- active: x > 0 (no upper bound)
  SELECT n.trial, n.step, n.tensor, n.worker,
         rule_inactive_units(n.value, 0, NULL, cfg.threshold_inactivity) AS pct
  FROM rule_now n, rule_dead_relu_cfg AS cfg
  WHERE n.tensor IN (SELECT tensor FROM rule_selected_tensors WHERE rule = 'dead_relu')
)
SELECT trial, step, tensor, worker, pct AS value,
       printf('%g%% of the units are inactive (threshold %g%%)', pct, cfg.threshold_layer) AS message
FROM x, rule_dead_relu_cfg AS cfg
WHERE pct > cfg.threshold_layer;

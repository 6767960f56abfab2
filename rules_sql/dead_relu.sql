-- dead_relu [tensor_regex=".*relu_output", threshold_inactivity=1.0, threshold_layer=50.0]
-- Units: if v has >= 2 dims, axis 0 is the batch and each position of the other axes is a
-- unit; else v is one unit. activity(unit) = 100 * fraction of its batch entries > 0.
-- Finding when 100 * (units with activity < threshold_inactivity) / units > threshold_layer.
-- value = that percentage.
INSERT OR IGNORE INTO rule_params(trial, rule, param, value) VALUES
  (NULL, 'dead_relu', 'tensor_regex', '.*relu_output'),
  (NULL, 'dead_relu', 'threshold_inactivity', '1.0'),
  (NULL, 'dead_relu', 'threshold_layer', '50.0');

DROP VIEW IF EXISTS rule_dead_relu;
CREATE VIEW rule_dead_relu AS
WITH cfg AS (
  SELECT rule_real((SELECT value FROM rule_param WHERE rule = 'dead_relu' AND param = 'threshold_inactivity')) AS threshold_inactivity,
         rule_real((SELECT value FROM rule_param WHERE rule = 'dead_relu' AND param = 'threshold_layer')) AS threshold_layer
),
x AS MATERIALIZED (
  -- active: x > 0 (no upper bound)
  SELECT n.trial, n.step, n.tensor, n.worker,
         rule_inactive_units(n.value, 0, NULL, cfg.threshold_inactivity) AS pct
  FROM rule_now n, cfg
  WHERE n.tensor IN (SELECT tensor FROM rule_selected_tensors WHERE rule = 'dead_relu')
)
SELECT trial, step, tensor, worker, pct AS value,
       printf('%g%% of the units are inactive (threshold %g%%)', pct, cfg.threshold_layer) AS message
FROM x, cfg
WHERE pct > cfg.threshold_layer;

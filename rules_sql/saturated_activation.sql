-- @rule saturated_activation batch
-- @param collection_names     list      ""                           collections whose tensors are checked (with tensor_regex)
-- @param tensor_regex         regex     .*tanh_input,.*sigmoid_input the tanh and sigmoid inputs checked
-- @param threshold_tanh       real_list -9.4999,9.4999               lo,hi: a tanh input entry is active when lo < x < hi
-- @param threshold_sigmoid    real_list -23,16.99999                 lo,hi: a sigmoid input entry is active when lo < x < hi
-- @param threshold_inactivity real      1.0                          percentage of active batch entries below which a unit is saturated
-- @param threshold_layer      real      50.0                         percentage of saturated units above which a tensor is a finding
--
-- For a selected tensor whose name contains `tanh` (else `sigmoid`; else skip), units as in
-- dead_relu; a batch entry is active when lo < x < hi; finding when
-- 100 * (units with activity < threshold_inactivity) / units > threshold_layer.
-- value = that percentage.
DROP VIEW IF EXISTS rule_saturated_activation;
CREATE VIEW rule_saturated_activation AS
WITH selection AS MATERIALIZED (
  SELECT tensor FROM rule_selected_tensors WHERE rule = 'saturated_activation'
),
sel AS (
  SELECT n.trial, n.step, n.tensor, n.worker, n.value,
         CASE WHEN instr(n.tensor, 'tanh') > 0 THEN cfg.threshold_tanh
              WHEN instr(n.tensor, 'sigmoid') > 0 THEN cfg.threshold_sigmoid END AS range
  FROM selection CROSS JOIN rule_now_by_tensor n, rule_saturated_activation_cfg AS cfg
  WHERE n.tensor = selection.tensor
),
x AS MATERIALIZED (
  SELECT sel.trial, sel.step, sel.tensor, sel.worker,
         rule_inactive_units(sel.value, (SELECT e.value FROM json_each(sel.range) e WHERE e.key = 0),
                             (SELECT e.value FROM json_each(sel.range) e WHERE e.key = 1),
                             cfg.threshold_inactivity) AS pct
  FROM sel, rule_saturated_activation_cfg AS cfg
  WHERE sel.range IS NOT NULL
)
SELECT trial, step, tensor, worker, pct AS value,
       printf('%g%% of the units are saturated (threshold %g%%)', pct, cfg.threshold_layer) AS message
FROM x, rule_saturated_activation_cfg AS cfg
WHERE pct > cfg.threshold_layer;

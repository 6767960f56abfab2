-- saturated_activation [collection_names; tensor_regex=".*tanh_input,.*sigmoid_input";
--   threshold_tanh="-9.4999,9.4999"; threshold_sigmoid="-23,16.99999";
--   threshold_inactivity=1.0, threshold_layer=50.0]
-- For a selected tensor whose name contains `tanh` (else `sigmoid`; else skip), units as in
-- dead_relu; a batch entry is active when lo < x < hi; finding when
-- 100 * (units with activity < threshold_inactivity) / units > threshold_layer.
-- value = that percentage.
INSERT OR IGNORE INTO rule_param(trial, rule, param, value) VALUES
  (NULL, 'saturated_activation', 'collection_names', ''),
  (NULL, 'saturated_activation', 'tensor_regex', '.*tanh_input,.*sigmoid_input'),
  (NULL, 'saturated_activation', 'threshold_tanh', '-9.4999,9.4999'),
  (NULL, 'saturated_activation', 'threshold_sigmoid', '-23,16.99999'),
  (NULL, 'saturated_activation', 'threshold_inactivity', '1.0'),
  (NULL, 'saturated_activation', 'threshold_layer', '50.0');

-- The rule's parameters in effect for the batch's trial, one typed column each.
DROP VIEW IF EXISTS rule_saturated_activation_cfg;
CREATE VIEW rule_saturated_activation_cfg AS
SELECT max(value) FILTER (WHERE param = 'threshold_tanh') AS threshold_tanh,
       max(value) FILTER (WHERE param = 'threshold_sigmoid') AS threshold_sigmoid,
       rule_real(max(value) FILTER (WHERE param = 'threshold_inactivity')) AS threshold_inactivity,
       rule_real(max(value) FILTER (WHERE param = 'threshold_layer')) AS threshold_layer
FROM rule_params
WHERE rule = 'saturated_activation';

DROP VIEW IF EXISTS rule_saturated_activation;
CREATE VIEW rule_saturated_activation AS
WITH sel AS (
  SELECT n.trial, n.step, n.tensor, n.worker, n.value,
         CASE WHEN instr(n.tensor, 'tanh') > 0 THEN cfg.threshold_tanh
              WHEN instr(n.tensor, 'sigmoid') > 0 THEN cfg.threshold_sigmoid END AS range
  FROM rule_now n, rule_saturated_activation_cfg AS cfg
  WHERE n.tensor IN (SELECT tensor FROM rule_selected_tensors WHERE rule = 'saturated_activation')
),
x AS MATERIALIZED (
  SELECT sel.trial, sel.step, sel.tensor, sel.worker,
         rule_inactive_units(sel.value, rule_list_item(sel.range, 0), rule_list_item(sel.range, 1),
                             cfg.threshold_inactivity) AS pct
  FROM sel, rule_saturated_activation_cfg AS cfg
  WHERE sel.range IS NOT NULL
)
SELECT trial, step, tensor, worker, pct AS value,
       printf('%g%% of the units are saturated (threshold %g%%)', pct, cfg.threshold_layer) AS message
FROM x, rule_saturated_activation_cfg AS cfg
WHERE pct > cfg.threshold_layer;

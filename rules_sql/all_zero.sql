-- all_zero [collection_names, tensor_regex: required; threshold=100]
-- Finding when 100 * (zero elements) / (elements) >= threshold (non-empty v).
-- value = that percentage. The counts are those computed at ingest (rule_now_distribution).
INSERT OR IGNORE INTO rule_param(trial, rule, param, value) VALUES
  (NULL, 'all_zero', 'collection_names', ''),
  (NULL, 'all_zero', 'tensor_regex', ''),
  (NULL, 'all_zero', 'threshold', '100');

-- The rule's parameters in effect for the batch's trial, one typed column each.
DROP VIEW IF EXISTS rule_all_zero_cfg;
CREATE VIEW rule_all_zero_cfg AS
SELECT rule_real(max(value) FILTER (WHERE param = 'threshold')) AS threshold
FROM rule_params
WHERE rule = 'all_zero';

DROP VIEW IF EXISTS rule_all_zero;
CREATE VIEW rule_all_zero AS
WITH x AS MATERIALIZED (
  SELECT n.trial, n.step, n.tensor, n.worker,
         100.0 * n.zero / n.count AS pct
  FROM rule_now_distribution n, rule_all_zero_cfg AS cfg
  WHERE n.tensor IN (SELECT tensor FROM rule_selected_tensors WHERE rule = 'all_zero')
)
SELECT trial, step, tensor, worker, pct AS value,
       printf('%g%% of the elements are zero (threshold %g%%)', pct, cfg.threshold) AS message
FROM x, rule_all_zero_cfg AS cfg
WHERE pct >= cfg.threshold;

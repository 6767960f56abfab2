-- all_zero [collection_names, tensor_regex: required; threshold=100]
-- Finding when 100 * (zero elements) / (elements) >= threshold (non-empty v).
-- value = that percentage. The counts are those computed at ingest (rule_now_distribution).
INSERT OR IGNORE INTO rule_params(trial, rule, param, value) VALUES
  (NULL, 'all_zero', 'collection_names', ''),
  (NULL, 'all_zero', 'tensor_regex', ''),
  (NULL, 'all_zero', 'threshold', '100');

DROP VIEW IF EXISTS rule_all_zero;
CREATE VIEW rule_all_zero AS
WITH cfg AS (
  SELECT rule_real((SELECT value FROM rule_param WHERE rule = 'all_zero' AND param = 'threshold')) AS threshold
),
x AS MATERIALIZED (
  SELECT n.trial, n.step, n.tensor, n.worker,
         100.0 * n.zero / n.count AS pct
  FROM rule_now_distribution n, cfg
  WHERE n.tensor IN (SELECT tensor FROM rule_selected_tensors WHERE rule = 'all_zero')
)
SELECT trial, step, tensor, worker, pct AS value,
       printf('%g%% of the elements are zero (threshold %g%%)', pct, cfg.threshold) AS message
FROM x, cfg
WHERE pct >= cfg.threshold;

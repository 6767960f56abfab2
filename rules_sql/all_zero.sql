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
  SELECT nullif((SELECT value FROM rule_param WHERE rule = 'all_zero' AND param = 'collection_names'), '') AS collection_names,
         nullif((SELECT value FROM rule_param WHERE rule = 'all_zero' AND param = 'tensor_regex'), '') AS tensor_regex,
         rule_real((SELECT value FROM rule_param WHERE rule = 'all_zero' AND param = 'threshold')) AS threshold
),
x AS MATERIALIZED (
  SELECT n.trial, n.step, n.tensor, n.worker,
         100.0 * n.zero / n.count AS pct
  FROM rule_now_distribution n, cfg
  WHERE rule_regexp_any(cfg.tensor_regex, n.tensor)
     OR EXISTS (SELECT 1 FROM collections k
                WHERE k.trial = n.trial AND k.tensor = n.tensor
                  AND rule_in_list(k.collection, cfg.collection_names))
)
SELECT trial, step, tensor, worker, pct AS value,
       printf('%g%% of the elements are zero (threshold %g%%)', pct, cfg.threshold) AS message
FROM x, cfg
WHERE pct >= cfg.threshold;

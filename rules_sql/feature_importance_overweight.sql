-- feature_importance_overweight [threshold=0.8, nfeatures=3,
--   tensor_regex=".*feature_importance/weight"]
-- At S, x = the sums of the matching tensors' values (worker_0), one per tensor; finding
-- `top_features` when sum(x) > 0 and sum of the nfeatures largest / sum(x) > threshold.
-- value = that fraction.
INSERT OR IGNORE INTO rule_param(trial, rule, param, value) VALUES
  (NULL, 'feature_importance_overweight', 'threshold', '0.8'),
  (NULL, 'feature_importance_overweight', 'nfeatures', '3'),
  (NULL, 'feature_importance_overweight', 'tensor_regex', '.*feature_importance/weight');

-- The rule's parameters in effect for the batch's trial, one typed column each.
DROP VIEW IF EXISTS rule_feature_importance_overweight_cfg;
CREATE VIEW rule_feature_importance_overweight_cfg AS
SELECT rule_real(max(value) FILTER (WHERE param = 'threshold')) AS threshold,
       rule_real(max(value) FILTER (WHERE param = 'nfeatures')) AS nfeatures
FROM rule_params
WHERE rule = 'feature_importance_overweight';

DROP VIEW IF EXISTS rule_feature_importance_overweight;
CREATE VIEW rule_feature_importance_overweight AS
WITH x AS MATERIALIZED (
  SELECT n.trial, n.step, tensor_reduce(n.value, 'sum') AS s
  FROM rule_now_primary n, rule_feature_importance_overweight_cfg AS cfg
  WHERE n.tensor IN (SELECT tensor FROM rule_selected_tensors WHERE rule = 'feature_importance_overweight')
),
ranked AS (
  SELECT x.*, row_number() OVER (PARTITION BY step ORDER BY s DESC) AS rank FROM x WHERE s IS NOT NULL
),
tot AS (
  SELECT trial, step, count(*) AS features, sum(s) AS total,
         sum(CASE WHEN rank <= cfg.nfeatures THEN s ELSE 0 END) AS top
  FROM ranked, rule_feature_importance_overweight_cfg AS cfg
  GROUP BY trial, step
)
SELECT trial, step, 'top_features' AS tensor, 'worker_0' AS worker, top / total AS value,
       printf('the %d largest of %d feature importances hold %.3g%% of the total',
              CAST(cfg.nfeatures AS INTEGER), features, 100 * top / total) AS message
FROM tot, rule_feature_importance_overweight_cfg AS cfg
WHERE total > 0 AND top / total > cfg.threshold;

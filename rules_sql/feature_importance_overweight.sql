-- @rule feature_importance_overweight batch
-- @param threshold    real    0.8                         share of the importance above which the top features are a finding
-- @param nfeatures    integer 3                           the number of top features
-- @param tensor_regex regex   .*feature_importance/weight the feature importance tensors
--
-- At S, x = the sums of the matching tensors' values (the primary worker's), one per tensor; finding
-- `top_features` when sum(x) > 0 and sum of the nfeatures largest / sum(x) > threshold.
-- value = that fraction.
DROP VIEW IF EXISTS rule_feature_importance_overweight;
CREATE VIEW rule_feature_importance_overweight AS
WITH selection AS MATERIALIZED (
  SELECT tensor FROM rule_selected_tensors WHERE rule = 'feature_importance_overweight'
),
x AS MATERIALIZED (
  SELECT n.trial, n.step, n.value AS s
  FROM selection CROSS JOIN rule_now_reduction_by_tensor n
  WHERE n.tensor = selection.tensor
    AND n.worker = (SELECT worker FROM rule_primary_worker)
    AND n.reduction = 'sum' AND n.abs = 0
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
SELECT trial, step, 'top_features' AS tensor, (SELECT worker FROM rule_primary_worker) AS worker, top / total AS value,
       printf('the %d largest of %d feature importances hold %.3g%% of the total',
              CAST(cfg.nfeatures AS INTEGER), features, 100 * top / total) AS message
FROM tot, rule_feature_importance_overweight_cfg AS cfg
WHERE total > 0 AND top / total > cfg.threshold;

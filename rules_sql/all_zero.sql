-- @rule all_zero batch
-- @param collection_names list  ""  collections whose tensors are checked (with tensor_regex)
-- @param tensor_regex     regex ""  tensors checked besides those of collection_names
-- @param threshold        real  100 percentage of zero elements at which a tensor is a finding
--
-- Finding when 100 * (zero elements) / (elements) >= threshold (non-empty v).
-- value = that percentage. The counts are those computed at ingest (rule_now_distribution).
DROP VIEW IF EXISTS rule_all_zero;
CREATE VIEW rule_all_zero AS
WITH selection AS MATERIALIZED (
  SELECT tensor FROM rule_selected_tensors WHERE rule = 'all_zero'
),
x AS MATERIALIZED (
  SELECT n.trial, n.step, n.tensor, n.worker,
         100.0 * n.zero / n.count AS pct
  FROM selection CROSS JOIN rule_now_distribution_by_tensor n
  WHERE n.tensor = selection.tensor
)
SELECT trial, step, tensor, worker, pct AS value,
       printf('%g%% of the elements are zero (threshold %g%%)', pct, cfg.threshold) AS message
FROM x, rule_all_zero_cfg AS cfg
WHERE pct >= cfg.threshold;

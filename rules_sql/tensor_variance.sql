-- @rule tensor_variance batch
-- @param collection_names list        ""   collections whose tensors are checked (with tensor_regex)
-- @param tensor_regex     regex       ""   tensors checked besides those of collection_names
-- @param max_threshold    real_or_inf +inf a variance above this is a finding
-- @param min_threshold    real_or_inf -inf a variance below this is a finding
--
-- Finding when var(v) > max_threshold or var(v) < min_threshold (population variance).
-- value = var(v).
DROP VIEW IF EXISTS rule_tensor_variance;
CREATE VIEW rule_tensor_variance AS
WITH selection AS MATERIALIZED (
  SELECT tensor FROM rule_selected_tensors WHERE rule = 'tensor_variance'
),
x AS MATERIALIZED (
  SELECT n.trial, n.step, n.tensor, n.worker, n.value AS var
  FROM selection CROSS JOIN rule_now_reduction_by_tensor n
  WHERE n.tensor = selection.tensor
    AND n.reduction = 'variance' AND n.abs = 0
)
SELECT trial, step, tensor, worker, var AS value,
       printf('variance %g is %s', var,
              CASE WHEN var > cfg.max_threshold THEN printf('above %g', cfg.max_threshold)
                   ELSE printf('below %g', cfg.min_threshold) END) AS message
FROM x, rule_tensor_variance_cfg AS cfg
WHERE var > cfg.max_threshold OR var < cfg.min_threshold;

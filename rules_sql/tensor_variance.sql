-- tensor_variance [collection_names, tensor_regex: required; max_threshold=+inf,
--   min_threshold=-inf]
-- Finding when var(v) > max_threshold or var(v) < min_threshold (population variance).
-- value = var(v).
INSERT OR IGNORE INTO rule_param(trial, rule, param, value) VALUES
  (NULL, 'tensor_variance', 'collection_names', ''),
  (NULL, 'tensor_variance', 'tensor_regex', ''),
  (NULL, 'tensor_variance', 'max_threshold', '+inf'),
  (NULL, 'tensor_variance', 'min_threshold', '-inf');

-- The rule's parameters in effect for the batch's trial, one typed column each.
DROP VIEW IF EXISTS rule_tensor_variance_cfg;
CREATE VIEW rule_tensor_variance_cfg AS
SELECT rule_real(max(value) FILTER (WHERE param = 'max_threshold')) AS max_threshold,
       rule_real(max(value) FILTER (WHERE param = 'min_threshold')) AS min_threshold
FROM rule_params
WHERE rule = 'tensor_variance';

DROP VIEW IF EXISTS rule_tensor_variance;
CREATE VIEW rule_tensor_variance AS
WITH x AS MATERIALIZED (
  SELECT n.trial, n.step, n.tensor, n.worker, tensor_reduce(n.value, 'variance') AS var
  FROM rule_now n, rule_tensor_variance_cfg AS cfg
  WHERE n.tensor IN (SELECT tensor FROM rule_selected_tensors WHERE rule = 'tensor_variance')
)
SELECT trial, step, tensor, worker, var AS value,
       printf('variance %g is %s', var,
              CASE WHEN var > cfg.max_threshold THEN printf('above %g', cfg.max_threshold)
                   ELSE printf('below %g', cfg.min_threshold) END) AS message
FROM x, rule_tensor_variance_cfg AS cfg
WHERE var > cfg.max_threshold OR var < cfg.min_threshold;

-- exploding_tensor [collection_names, tensor_regex: default all; only_nan=false]
-- Finding when v has a NaN, or (only_nan false) a +-Inf. value = number of such elements,
-- counted at ingest (rule_now_distribution).
INSERT OR IGNORE INTO rule_param(trial, rule, param, value) VALUES
  (NULL, 'exploding_tensor', 'collection_names', ''),
  (NULL, 'exploding_tensor', 'tensor_regex', ''),
  (NULL, 'exploding_tensor', 'only_nan', 'false');

-- The rule's parameters in effect for the batch's trial, one typed column each.
DROP VIEW IF EXISTS rule_exploding_tensor_cfg;
CREATE VIEW rule_exploding_tensor_cfg AS
SELECT nullif(max(value) FILTER (WHERE param = 'collection_names'), '') AS collection_names,
       nullif(max(value) FILTER (WHERE param = 'tensor_regex'), '') AS tensor_regex,
       rule_bool(max(value) FILTER (WHERE param = 'only_nan')) AS only_nan
FROM rule_params
WHERE rule = 'exploding_tensor';

DROP VIEW IF EXISTS rule_exploding_tensor;
CREATE VIEW rule_exploding_tensor AS
WITH x AS MATERIALIZED (
  SELECT n.trial, n.step, n.tensor, n.worker,
         n.nan + CASE WHEN cfg.only_nan THEN 0 ELSE n.pos_inf + n.neg_inf END AS bad
  FROM rule_now_distribution n, rule_exploding_tensor_cfg AS cfg
  WHERE (cfg.collection_names IS NULL AND cfg.tensor_regex IS NULL)
     OR n.tensor IN (SELECT tensor FROM rule_selected_tensors WHERE rule = 'exploding_tensor')
)
SELECT trial, step, tensor, worker, bad AS value,
       printf('%d NaN%s element(s)', bad, CASE WHEN cfg.only_nan THEN '' ELSE '/Inf' END) AS message
FROM x, rule_exploding_tensor_cfg AS cfg
WHERE bad > 0;

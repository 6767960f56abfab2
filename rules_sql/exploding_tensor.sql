-- @rule exploding_tensor batch
-- @param collection_names list    ""    collections whose tensors are checked (with tensor_regex; both empty: every tensor)
-- @param tensor_regex     regex   ""    tensors checked besides those of collection_names
-- @param only_nan         boolean false true: only NaN counts, not +-Inf
--
-- Finding when v has a NaN, or (only_nan false) a +-Inf. value = number of such elements,
-- counted at ingest (rule_now_distribution).
DROP VIEW IF EXISTS rule_exploding_tensor;
CREATE VIEW rule_exploding_tensor AS
WITH selection AS MATERIALIZED (  -- empty when both are (rule_selected_tensors)
  SELECT tensor FROM rule_selected_tensors WHERE rule = 'exploding_tensor'
),
x AS MATERIALIZED (  -- the values with bad elements only: materializing every value cost a quarter of the rule
  SELECT *
  FROM (
    SELECT n.trial, n.step, n.tensor, n.worker,
           n.nan + CASE WHEN cfg.only_nan THEN 0 ELSE n.pos_inf + n.neg_inf END AS bad
    FROM rule_exploding_tensor_cfg AS cfg
    CROSS JOIN rule_now_distribution n
    WHERE cfg.collection_names IS NULL AND cfg.tensor_regex IS NULL
    UNION ALL
    SELECT n.trial, n.step, n.tensor, n.worker,
           n.nan + CASE WHEN cfg.only_nan THEN 0 ELSE n.pos_inf + n.neg_inf END AS bad
    FROM selection
    CROSS JOIN rule_now_distribution_by_tensor n
    CROSS JOIN rule_exploding_tensor_cfg AS cfg
    WHERE n.tensor = selection.tensor
  )
  WHERE bad > 0
)
SELECT trial, step, tensor, worker, bad AS value,
       printf('%d NaN%s element(s)', bad, CASE WHEN cfg.only_nan THEN '' ELSE '/Inf' END) AS message
FROM x, rule_exploding_tensor_cfg AS cfg;

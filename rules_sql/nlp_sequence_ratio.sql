-- @rule nlp_sequence_ratio batch
-- @param tensor_regex             regex     .*embedding0_input_0 the input sequences checked
-- @param token_values             real_list 0                    the tokens counted (e.g. padding)
-- @param token_thresholds_percent real_list 50                   per token, the percentage above which a sequence is a finding
--
-- Finding when for some k, 100 * count(v == token_k) / size > threshold_k (pairs matched by
-- position). value = the largest such percentage.
DROP VIEW IF EXISTS rule_nlp_sequence_ratio;
CREATE VIEW rule_nlp_sequence_ratio AS
WITH pairs AS (  -- (token, threshold) by position
  SELECT t.value AS token, h.value AS threshold
  FROM rule_nlp_sequence_ratio_cfg AS cfg, json_each(cfg.token_values) t
  JOIN json_each(cfg.token_thresholds_percent) h ON h.key = t.key
),
selection AS MATERIALIZED (
  SELECT tensor FROM rule_selected_tensors WHERE rule = 'nlp_sequence_ratio'
),
x AS MATERIALIZED (
  SELECT n.trial, n.step, n.tensor, n.worker, pairs.token, pairs.threshold,
         100.0 * tensor_count(n.real_value, '=', pairs.token) / tensor_numel(n.real_value) AS pct
  FROM selection CROSS JOIN rule_now_by_tensor n, pairs
  WHERE n.tensor = selection.tensor
)
SELECT trial, step, tensor, worker, max(pct) AS value,
       printf('token %s makes up %g%% of the sequence (threshold %g%%)', rule_number_text(token), max(pct), threshold) AS message
FROM x
WHERE pct > threshold
GROUP BY trial, step, tensor, worker;

-- nlp_sequence_ratio [tensor_regex=".*embedding0_input_0", token_values="0",
--   token_thresholds_percent="50"]
-- Finding when for some k, 100 * count(v == token_k) / size > threshold_k (pairs matched by
-- position). value = the largest such percentage.
INSERT OR IGNORE INTO rule_param(trial, rule, param, value) VALUES
  (NULL, 'nlp_sequence_ratio', 'tensor_regex', '.*embedding0_input_0'),
  (NULL, 'nlp_sequence_ratio', 'token_values', '0'),
  (NULL, 'nlp_sequence_ratio', 'token_thresholds_percent', '50');

-- The rule's parameters in effect for the batch's trial, one typed column each.
DROP VIEW IF EXISTS rule_nlp_sequence_ratio_cfg;
CREATE VIEW rule_nlp_sequence_ratio_cfg AS
SELECT rule_list_json(max(value) FILTER (WHERE param = 'token_values')) AS token_values,
       rule_list_json(max(value) FILTER (WHERE param = 'token_thresholds_percent')) AS token_thresholds_percent
FROM rule_params
WHERE rule = 'nlp_sequence_ratio';

DROP VIEW IF EXISTS rule_nlp_sequence_ratio;
CREATE VIEW rule_nlp_sequence_ratio AS
WITH pairs AS (  -- (token, threshold) by position
  SELECT t.value AS token, h.value AS threshold
  FROM rule_nlp_sequence_ratio_cfg AS cfg, json_each(cfg.token_values) t
  JOIN json_each(cfg.token_thresholds_percent) h ON h.key = t.key
),
x AS MATERIALIZED (
  SELECT n.trial, n.step, n.tensor, n.worker, pairs.token, pairs.threshold,
         100.0 * tensor_count(n.real_value, '=', pairs.token) / tensor_numel(n.real_value) AS pct
  FROM rule_now n, pairs
  WHERE n.tensor IN (SELECT tensor FROM rule_selected_tensors WHERE rule = 'nlp_sequence_ratio')
)
SELECT trial, step, tensor, worker, max(pct) AS value,
       printf('token %s makes up %g%% of the sequence (threshold %g%%)', rule_number_text(token), max(pct), threshold) AS message
FROM x
WHERE pct > threshold
GROUP BY trial, step, tensor, worker;

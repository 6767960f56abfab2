-- nlp_sequence_ratio [tensor_regex=".*embedding0_input_0", token_values="0",
--   token_thresholds_percent="50"]
-- Finding when for some k, 100 * count(v == token_k) / size > threshold_k (pairs matched by
-- position). value = the largest such percentage.
INSERT OR IGNORE INTO rule_params(trial, rule, param, value) VALUES
  (NULL, 'nlp_sequence_ratio', 'tensor_regex', '.*embedding0_input_0'),
  (NULL, 'nlp_sequence_ratio', 'token_values', '0'),
  (NULL, 'nlp_sequence_ratio', 'token_thresholds_percent', '50');

DROP VIEW IF EXISTS rule_nlp_sequence_ratio;
CREATE VIEW rule_nlp_sequence_ratio AS
WITH cfg AS (
  SELECT (SELECT value FROM rule_param WHERE rule = 'nlp_sequence_ratio' AND param = 'token_values') AS tokens,
         (SELECT value FROM rule_param WHERE rule = 'nlp_sequence_ratio' AND param = 'token_thresholds_percent') AS thresholds
),
pairs AS (  -- (token, threshold) by position
  SELECT t.value AS token, h.value AS threshold
  FROM cfg, json_each(rule_list_json(cfg.tokens)) t
  JOIN json_each(rule_list_json(cfg.thresholds)) h ON h.key = t.key
),
x AS MATERIALIZED (
  SELECT n.trial, n.step, n.tensor, n.worker, pairs.token, pairs.threshold,
         100.0 * tensor_count(n.real_value, '=', pairs.token) / tensor_numel(n.real_value) AS pct
  FROM rule_now n, cfg, pairs
  WHERE n.tensor IN (SELECT tensor FROM rule_selected_tensors WHERE rule = 'nlp_sequence_ratio')
)
SELECT trial, step, tensor, worker, max(pct) AS value,
       printf('token %s makes up %g%% of the sequence (threshold %g%%)', rule_number_text(token), max(pct), threshold) AS message
FROM x
WHERE pct > threshold
GROUP BY trial, step, tensor, worker;

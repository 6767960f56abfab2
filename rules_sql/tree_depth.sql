-- tree_depth [depth=4, tensor_regex=".*trees/Node"]
-- Finding when max(v) > 0 and log2(max(v)) < depth. value = log2(max(v)).
INSERT OR IGNORE INTO rule_params(trial, rule, param, value) VALUES
  (NULL, 'tree_depth', 'depth', '4'),
  (NULL, 'tree_depth', 'tensor_regex', '.*trees/Node');

DROP VIEW IF EXISTS rule_tree_depth;
CREATE VIEW rule_tree_depth AS
WITH cfg AS (
  SELECT rule_real((SELECT value FROM rule_param WHERE rule = 'tree_depth' AND param = 'depth')) AS depth
),
x AS MATERIALIZED (
  SELECT n.trial, n.step, n.tensor, n.worker, tensor_reduce(n.value, 'max') AS top
  FROM rule_now n, cfg
  WHERE n.tensor IN (SELECT tensor FROM rule_selected_tensors WHERE rule = 'tree_depth')
)
SELECT trial, step, tensor, worker, rule_log2(top) AS value,
       printf('tree depth log2(%g) = %g is below %g', top, rule_log2(top), cfg.depth) AS message
FROM x, cfg
WHERE top > 0 AND rule_log2(top) < cfg.depth;

-- tree_depth [depth=4, tensor_regex=".*trees/Node"]
-- Finding when max(v) > 0 and log2(max(v)) < depth. value = log2(max(v)). max(v) is the
-- distribution's p100 (computed at ingest, rule_now_distribution) where v has no NaN, and NaN,
-- which never fires, where it has.
INSERT OR IGNORE INTO rule_param(trial, rule, param, value) VALUES
  (NULL, 'tree_depth', 'depth', '4'),
  (NULL, 'tree_depth', 'tensor_regex', '.*trees/Node');

-- The rule's parameters in effect for the batch's trial, one typed column each.
DROP VIEW IF EXISTS rule_tree_depth_cfg;
CREATE VIEW rule_tree_depth_cfg AS
SELECT rule_real(max(value) FILTER (WHERE param = 'depth')) AS depth
FROM rule_params
WHERE rule = 'tree_depth';

DROP VIEW IF EXISTS rule_tree_depth;
CREATE VIEW rule_tree_depth AS
WITH x AS MATERIALIZED (
  SELECT n.trial, n.step, n.tensor, n.worker, n.p100 AS top
  FROM rule_now_distribution n
  WHERE n.tensor IN (SELECT tensor FROM rule_selected_tensors WHERE rule = 'tree_depth')
    AND n.nan = 0
)
SELECT trial, step, tensor, worker, rule_log2(top) AS value,
       printf('tree depth log2(%g) = %g is below %g', top, rule_log2(top), cfg.depth) AS message
FROM x, rule_tree_depth_cfg AS cfg
WHERE top > 0 AND rule_log2(top) < cfg.depth;

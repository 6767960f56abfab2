-- @rule tree_depth batch
-- @param depth        integer 4            a tree shallower than this is a finding
-- @param tensor_regex regex   .*trees/Node the tree node tensors
--
-- Finding when max(v) > 0 and log2(max(v)) < depth. value = log2(max(v)). max(v) is the
-- distribution's p100 (computed at ingest, rule_now_distribution) where v has no NaN, and NaN,
-- which never fires, where it has.
DROP VIEW IF EXISTS rule_tree_depth;
CREATE VIEW rule_tree_depth AS
WITH selection AS MATERIALIZED (
  SELECT tensor FROM rule_selected_tensors WHERE rule = 'tree_depth'
),
x AS MATERIALIZED (
  SELECT n.trial, n.step, n.tensor, n.worker, n.p100 AS top
  FROM selection CROSS JOIN rule_now_distribution_by_tensor n
  WHERE n.tensor = selection.tensor
    AND n.nan = 0
)
SELECT trial, step, tensor, worker, rule_log2(top) AS value,
       printf('tree depth log2(%g) = %g is below %g', top, rule_log2(top), cfg.depth) AS message
FROM x, rule_tree_depth_cfg AS cfg
WHERE top > 0 AND rule_log2(top) < cfg.depth;

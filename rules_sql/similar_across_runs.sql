-- @rule similar_across_runs batch
-- @param other_trial      trial "" the trial compared with (required)
-- @param collection_names list  "" collections whose tensors are compared (with tensor_regex; both empty: every tensor)
-- @param tensor_regex     regex "" tensors compared besides those of collection_names
--
-- Finding per (tensor, worker, S) saved in both trials at the same global step when shapes
-- differ or not allclose(v_base, v_other, rtol=1e-5, atol=1e-8).
-- value = ||v_base - v_other|| (NULL when the shapes differ).
-- other_trial names another trial in the same database; its step S must be complete.
-- The other trial's values at the batch's global steps (as rule_now, rules_base.sql, from
-- tensor_values: searched by the other trial's own number for the step, which differs from the
-- global step for a GLOBAL-mode step; real_value NULL for strings and complex).
DROP VIEW IF EXISTS rule_similar_across_runs_other;
CREATE VIEW rule_similar_across_runs_other AS
SELECT v.trial, v.global_step AS step, v.tensor, v.worker, v.value,
       CASE WHEN v.dtype NOT IN ('complex64', 'complex128', 'string') THEN v.value END AS real_value
FROM rule_batch b
JOIN steps s ON s.trial = (SELECT other_trial FROM rule_similar_across_runs_cfg)
            AND s.step = b.step
CROSS JOIN tensor_values v
WHERE v.trial = s.trial
  AND v.step = CASE WHEN s.mode = 'GLOBAL' THEN s.mode_step ELSE s.step END
  AND v.global_step = b.step
  AND v.value IS NOT NULL;

DROP VIEW IF EXISTS rule_similar_across_runs;
CREATE VIEW rule_similar_across_runs AS
WITH o AS MATERIALIZED (  -- the other trial's values at the same global steps
  SELECT trial, step, tensor, worker, real_value FROM rule_similar_across_runs_other
),
x AS MATERIALIZED (  -- close and diff NULL for strings and complex; shapes that differ are not close
  SELECT n.trial, n.step, n.tensor, n.worker, o.trial AS other,
         CASE tensor_shape(n.real_value) = tensor_shape(o.real_value)
           WHEN 1 THEN tensor_allclose(n.real_value, o.real_value, 1e-5, 1e-8, 0) WHEN 0 THEN 0 END AS close,
         CASE WHEN tensor_shape(n.real_value) = tensor_shape(o.real_value)
           THEN tensor_diff_norm(n.real_value, o.real_value) END AS diff
  FROM o  -- first: the other trial's values are looked up here, none when there is no other trial
  CROSS JOIN rule_now n
  CROSS JOIN rule_similar_across_runs_cfg AS cfg
  WHERE o.step = n.step AND o.tensor = n.tensor AND o.worker = n.worker
    AND ((cfg.collection_names IS NULL AND cfg.tensor_regex IS NULL)
         OR n.tensor IN (SELECT tensor FROM rule_selected_tensors WHERE rule = 'similar_across_runs'))
)
SELECT trial, step, tensor, worker, diff AS value,
       CASE WHEN diff IS NULL THEN printf('shape differs from %s', other)
            ELSE printf('differs from %s (||difference|| %g)', other, diff) END AS message
FROM x
WHERE close = 0;

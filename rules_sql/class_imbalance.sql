-- @rule class_imbalance batch
-- @param threshold_imbalance     real    10            largest / smallest class count above which the labels are imbalanced
-- @param threshold_misprediction real    0.7           fraction of a class predicted wrong above which it is a finding
-- @param samples                 integer 500           labels seen before the rule judges
-- @param argmax                  boolean false         predictions are scores: take the argmax over their last axis
-- @param labels_regex            regex   .*labels      the labels tensor (the first matching name)
-- @param predictions_regex       regex   .*predictions the predictions tensor (the first matching name)
--
-- labels = first matching tensor by name, predictions likewise (argmax over the last axis
-- when argmax). At each step where both are saved with equal element counts, append them to
-- running totals. Once the totals hold >= samples labels: finding `imbalance` when max/min
-- class count > threshold_imbalance (classes = label values seen; value = that ratio); finding
-- `class_<c>` for each class whose fraction of wrong predictions > threshold_misprediction
-- (value = that fraction). Values of the primary worker (rule_primary_worker).
--
-- State: per class the running count of labels and of wrong predictions. A batch adds the
-- counts of its steps to them in step order (window sums); the totals after each step that
-- added are kept until the next batch, for the findings.
CREATE TABLE IF NOT EXISTS rule_class_imbalance_count (
  trial TEXT NOT NULL,
  class REAL NOT NULL,
  n     INTEGER NOT NULL,     -- labels of this class so far
  wrong INTEGER NOT NULL,     -- of which predicted as another class
  step  INTEGER NOT NULL,     -- the last step that added to the totals
  PRIMARY KEY (trial, class)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS rule_class_imbalance_walk (
  trial TEXT NOT NULL,
  step  INTEGER NOT NULL,     -- a step of the last batch that added to the totals
  class REAL NOT NULL,        -- a class seen by then, and its totals after the step
  n     INTEGER NOT NULL,
  wrong INTEGER NOT NULL,
  PRIMARY KEY (trial, step, class)
) WITHOUT ROWID;

-- (step, label, prediction, count) at the batch's steps where both tensors are saved and match,
-- labels and predictions as class indices: a value with a fraction is truncated toward zero
-- (numpy's astype(int)); `indices` says whether every value of the step was a class index
-- already, and `example` is else the step's first value with a fraction.
DROP VIEW IF EXISTS rule_class_imbalance_pairs;
CREATE VIEW rule_class_imbalance_pairs AS
WITH names AS MATERIALIZED (
  SELECT (SELECT min(t.tensor) FROM tensors t WHERE t.trial = b.trial AND rule_regexp_any(cfg.labels_regex, t.tensor)) AS labels,
         (SELECT min(t.tensor) FROM tensors t WHERE t.trial = b.trial AND rule_regexp_any(cfg.predictions_regex, t.tensor)) AS predictions
  FROM (SELECT trial FROM rule_batch LIMIT 1) b, rule_class_imbalance_cfg AS cfg
),
pairs AS (
  SELECT l.trial, l.step, x.label, x.prediction, x.n, x.example_label, x.example_prediction
  FROM names, rule_class_imbalance_cfg AS cfg
  JOIN rule_now_primary l ON l.tensor = names.labels
  JOIN rule_now_primary p ON p.step = l.step AND p.tensor = names.predictions
  CROSS JOIN rule_label_pairs(l.value, p.value, cfg.argmax) x
)
SELECT trial, step, label, prediction, n, example_label IS NULL AS indices,
       CASE WHEN example_label <> CAST(example_label AS INTEGER) THEN example_label ELSE example_prediction END AS example
FROM pairs;

-- The totals per class after each step of the batch that added to them: the state's plus the
-- batch's counts through the step, for the classes seen by then.
DROP VIEW IF EXISTS rule_class_imbalance_steps;
CREATE VIEW rule_class_imbalance_steps AS
WITH added AS MATERIALIZED (
  SELECT trial, step, label AS class, sum(n) AS n, sum(CASE WHEN prediction <> label THEN n ELSE 0 END) AS wrong
  FROM rule_class_imbalance_pairs
  GROUP BY trial, step, label
),
state AS (
  SELECT s.class, s.n, s.wrong FROM rule_class_imbalance_count s
  WHERE s.trial = (SELECT trial FROM rule_batch LIMIT 1)
),
grid AS (  -- every step that added, with every class of the state or the batch
  SELECT s.trial, s.step, c.class
  FROM (SELECT DISTINCT trial, step FROM added) s
  CROSS JOIN (SELECT class FROM state UNION SELECT class FROM added) c
),
running AS (
  SELECT g.trial, g.step, g.class,
         ifnull(st.n, 0) + sum(ifnull(a.n, 0)) OVER w AS n,
         ifnull(st.wrong, 0) + sum(ifnull(a.wrong, 0)) OVER w AS wrong,
         (st.class IS NOT NULL) + count(a.class) OVER w AS seen
  FROM grid g
  LEFT JOIN added a ON a.step = g.step AND a.class = g.class
  LEFT JOIN state st ON st.class = g.class
  WINDOW w AS (PARTITION BY g.class ORDER BY g.step)
)
SELECT trial, step, class, n, wrong FROM running WHERE seen > 0;

DROP TRIGGER IF EXISTS rule_class_imbalance_fold;
CREATE TRIGGER rule_class_imbalance_fold
AFTER UPDATE OF step ON rule_progress
WHEN new.rule = 'class_imbalance'
BEGIN
  DELETE FROM rule_class_imbalance_walk WHERE trial = new.trial;
  INSERT INTO rule_class_imbalance_walk(trial, step, class, n, wrong)
  SELECT trial, step, class, n, wrong FROM rule_class_imbalance_steps;
  INSERT OR REPLACE INTO rule_class_imbalance_count(trial, class, n, wrong, step)
  SELECT w.trial, w.class, w.n, w.wrong, w.step
  FROM rule_class_imbalance_walk w
  WHERE w.trial = new.trial
    AND w.step = (SELECT max(v.step) FROM rule_class_imbalance_walk v WHERE v.trial = w.trial);
END;

DROP VIEW IF EXISTS rule_class_imbalance;
CREATE VIEW rule_class_imbalance AS
WITH k AS (
  SELECT w.* FROM rule_batch c
  JOIN rule_class_imbalance_walk w ON w.trial = c.trial AND w.step = c.step
),
tot AS (
  SELECT trial, step, sum(n) AS total, max(n) AS most, min(n) AS least FROM k GROUP BY trial, step
)
SELECT tot.trial, tot.step, 'imbalance' AS tensor, (SELECT worker FROM rule_primary_worker) AS worker,
       rule_div(tot.most, tot.least) AS value,
       printf('the largest class has %d labels, the smallest %d', tot.most, tot.least) AS message
FROM tot, rule_class_imbalance_cfg AS cfg
WHERE tot.total >= cfg.samples AND rule_div(tot.most, tot.least) > cfg.threshold_imbalance
UNION ALL
SELECT k.trial, k.step, 'class_' || rule_number_text(k.class), (SELECT worker FROM rule_primary_worker),
       CAST(k.wrong AS REAL) / k.n,
       printf('%.3g%% of class %s''s %d labels were mispredicted (threshold %.3g%%)', 100.0 * k.wrong / k.n,
              rule_number_text(k.class), k.n, 100 * cfg.threshold_misprediction)
FROM k
JOIN tot ON tot.step = k.step
CROSS JOIN rule_class_imbalance_cfg AS cfg
WHERE tot.total >= cfg.samples AND CAST(k.wrong AS REAL) / k.n > cfg.threshold_misprediction;

-- A note (the runner prints each once per trial and run): the tensors hold values that are not
-- class indices.
DROP VIEW IF EXISTS rule_class_imbalance_note;
CREATE VIEW rule_class_imbalance_note AS
SELECT x.trial,
       printf('the labels or predictions hold values that are not class indices (e.g. %s at step %d), truncated ' ||
              'toward zero as numpy''s astype(int) does; for per-class scores use --param class_imbalance.argmax=true, ' ||
              'for probabilities save a thresholded tensor and select it with --param class_imbalance.predictions_regex',
              rule_number_text(x.example), x.step) AS note
FROM rule_class_imbalance_pairs x
WHERE NOT x.indices
LIMIT 1;

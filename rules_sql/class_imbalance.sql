-- class_imbalance [threshold_imbalance=10, threshold_misprediction=0.7, samples=500,
--   argmax=false, labels_regex=".*labels", predictions_regex=".*predictions"]
-- labels = first matching tensor by name, predictions likewise (argmax over the last axis
-- when argmax). At each step where both are saved with equal element counts, append them to
-- running totals. Once the totals hold >= samples labels: finding `imbalance` when max/min
-- class count > threshold_imbalance (classes = label values seen; value = that ratio); finding
-- `class_<c>` for each class whose fraction of wrong predictions > threshold_misprediction
-- (value = that fraction). Values of worker_0.
--
-- State: per class the running count of labels and of wrong predictions. A batch adds the
-- counts of its steps to them in step order (window sums); the totals after each step that
-- added are kept until the next batch, for the findings.
INSERT OR IGNORE INTO rule_param(trial, rule, param, value) VALUES
  (NULL, 'class_imbalance', 'threshold_imbalance', '10'),
  (NULL, 'class_imbalance', 'threshold_misprediction', '0.7'),
  (NULL, 'class_imbalance', 'samples', '500'),
  (NULL, 'class_imbalance', 'argmax', 'false'),
  (NULL, 'class_imbalance', 'labels_regex', '.*labels'),
  (NULL, 'class_imbalance', 'predictions_regex', '.*predictions');

-- The rule's parameters in effect for the batch's trial, one typed column each.
DROP VIEW IF EXISTS rule_class_imbalance_cfg;
CREATE VIEW rule_class_imbalance_cfg AS
SELECT nullif(max(value) FILTER (WHERE param = 'labels_regex'), '') AS labels_regex,
       nullif(max(value) FILTER (WHERE param = 'predictions_regex'), '') AS predictions_regex,
       rule_bool(max(value) FILTER (WHERE param = 'argmax')) AS argmax,
       rule_real(max(value) FILTER (WHERE param = 'threshold_imbalance')) AS threshold_imbalance,
       rule_real(max(value) FILTER (WHERE param = 'threshold_misprediction')) AS threshold_misprediction,
       rule_real(max(value) FILTER (WHERE param = 'samples')) AS samples
FROM rule_params
WHERE rule = 'class_imbalance';

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

-- (step, label, prediction, count) at the batch's steps where both tensors are saved and match.
DROP VIEW IF EXISTS rule_class_imbalance_pairs;
CREATE VIEW rule_class_imbalance_pairs AS
WITH names AS MATERIALIZED (
  SELECT (SELECT min(t.tensor) FROM tensors t WHERE t.trial = b.trial AND rule_regexp_any(cfg.labels_regex, t.tensor)) AS labels,
         (SELECT min(t.tensor) FROM tensors t WHERE t.trial = b.trial AND rule_regexp_any(cfg.predictions_regex, t.tensor)) AS predictions
  FROM (SELECT trial FROM rule_batch LIMIT 1) b, rule_class_imbalance_cfg AS cfg
),
pairs AS MATERIALIZED (
  SELECT l.trial, l.step, rule_label_pairs(l.value, p.value, cfg.argmax) AS pairs
  FROM names, rule_class_imbalance_cfg AS cfg
  JOIN rule_now_primary l ON l.tensor = names.labels
  JOIN rule_now_primary p ON p.step = l.step AND p.tensor = names.predictions
)
SELECT pairs.trial, pairs.step,
       (SELECT e.value FROM json_each(j.value) e WHERE e.key = 0) AS label,
       (SELECT e.value FROM json_each(j.value) e WHERE e.key = 1) AS prediction,
       (SELECT e.value FROM json_each(j.value) e WHERE e.key = 2) AS n
FROM pairs, json_each(pairs.pairs) j
WHERE pairs.pairs IS NOT NULL;

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
SELECT tot.trial, tot.step, 'imbalance' AS tensor, 'worker_0' AS worker,
       rule_div(tot.most, tot.least) AS value,
       printf('the largest class has %d labels, the smallest %d', tot.most, tot.least) AS message
FROM tot, rule_class_imbalance_cfg AS cfg
WHERE tot.total >= cfg.samples AND rule_div(tot.most, tot.least) > cfg.threshold_imbalance
UNION ALL
SELECT k.trial, k.step, 'class_' || rule_number_text(k.class), 'worker_0',
       CAST(k.wrong AS REAL) / k.n,
       printf('%.3g%% of class %s''s %d labels were mispredicted (threshold %.3g%%)', 100.0 * k.wrong / k.n,
              rule_number_text(k.class), k.n, 100 * cfg.threshold_misprediction)
FROM k
JOIN tot ON tot.step = k.step
CROSS JOIN rule_class_imbalance_cfg AS cfg
WHERE tot.total >= cfg.samples AND CAST(k.wrong AS REAL) / k.n > cfg.threshold_misprediction;

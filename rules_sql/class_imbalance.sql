-- class_imbalance [threshold_imbalance=10, threshold_misprediction=0.7, samples=500,
--   argmax=false, labels_regex=".*labels", predictions_regex=".*predictions"]
-- labels = first matching tensor by name, predictions likewise (argmax over the last axis
-- when argmax). At each step where both are saved with equal element counts, append them to
-- running totals. Once the totals hold >= samples labels: finding `imbalance` when max/min
-- class count > threshold_imbalance (classes = label values seen; value = that ratio); finding
-- `class_<c>` for each class whose fraction of wrong predictions > threshold_misprediction
-- (value = that fraction). Values of worker_0.
--
-- State: per class the running count of labels and of wrong predictions.
INSERT OR REPLACE INTO rule_catalog(rule, kind) VALUES ('class_imbalance', 'step');   -- its state is folded one step at a time

INSERT OR IGNORE INTO rule_params(trial, rule, param, value) VALUES
  (NULL, 'class_imbalance', 'threshold_imbalance', '10'),
  (NULL, 'class_imbalance', 'threshold_misprediction', '0.7'),
  (NULL, 'class_imbalance', 'samples', '500'),
  (NULL, 'class_imbalance', 'argmax', 'false'),
  (NULL, 'class_imbalance', 'labels_regex', '.*labels'),
  (NULL, 'class_imbalance', 'predictions_regex', '.*predictions');

CREATE TABLE IF NOT EXISTS rule_class_imbalance_count (
  trial TEXT NOT NULL,
  class REAL NOT NULL,
  n     INTEGER NOT NULL,     -- labels of this class so far
  wrong INTEGER NOT NULL,     -- of which predicted as another class
  step  INTEGER NOT NULL,     -- the last step that added to the totals
  PRIMARY KEY (trial, class)
) WITHOUT ROWID;

-- (label, prediction, count) at the cursor step, when both tensors are saved and match.
DROP VIEW IF EXISTS rule_class_imbalance_pairs;
CREATE VIEW rule_class_imbalance_pairs AS
WITH cfg AS (
  SELECT nullif((SELECT value FROM rule_param WHERE rule = 'class_imbalance' AND param = 'labels_regex'), '') AS labels_regex,
         nullif((SELECT value FROM rule_param WHERE rule = 'class_imbalance' AND param = 'predictions_regex'), '') AS predictions_regex,
         rule_bool((SELECT value FROM rule_param WHERE rule = 'class_imbalance' AND param = 'argmax')) AS argmax
),
names AS MATERIALIZED (
  SELECT (SELECT min(t.tensor) FROM tensors t WHERE t.trial = c.trial AND rule_regexp_any(cfg.labels_regex, t.tensor)) AS labels,
         (SELECT min(t.tensor) FROM tensors t WHERE t.trial = c.trial AND rule_regexp_any(cfg.predictions_regex, t.tensor)) AS predictions
  FROM rule_batch c, cfg
),
pairs AS MATERIALIZED (
  SELECT c.trial, c.step,
         rule_label_pairs((SELECT n.value FROM rule_now_primary n WHERE n.tensor = names.labels),
                          (SELECT n.value FROM rule_now_primary n WHERE n.tensor = names.predictions),
                          cfg.argmax) AS pairs
  FROM rule_batch c, names, cfg
)
SELECT pairs.trial, pairs.step,
       (SELECT e.value FROM json_each(j.value) e WHERE e.key = 0) AS label,
       (SELECT e.value FROM json_each(j.value) e WHERE e.key = 1) AS prediction,
       (SELECT e.value FROM json_each(j.value) e WHERE e.key = 2) AS n
FROM pairs, json_each(pairs.pairs) j
WHERE pairs.pairs IS NOT NULL;

DROP TRIGGER IF EXISTS rule_class_imbalance_fold;
CREATE TRIGGER rule_class_imbalance_fold
AFTER UPDATE OF step ON rule_progress
WHEN new.rule = 'class_imbalance'
BEGIN
  INSERT INTO rule_class_imbalance_count(trial, class, n, wrong, step)
  SELECT trial, label, sum(n), sum(CASE WHEN prediction <> label THEN n ELSE 0 END), step
  FROM rule_class_imbalance_pairs
  WHERE true
  GROUP BY label
  ON CONFLICT (trial, class) DO UPDATE
    SET n = n + excluded.n, wrong = wrong + excluded.wrong, step = excluded.step;
  -- Every class stays in the totals of a step that added to them.
  UPDATE rule_class_imbalance_count SET step = new.step
  WHERE trial = new.trial AND EXISTS (SELECT 1 FROM rule_class_imbalance_pairs);
END;

DROP VIEW IF EXISTS rule_class_imbalance;
CREATE VIEW rule_class_imbalance AS
WITH cfg AS (
  SELECT rule_real((SELECT value FROM rule_param WHERE rule = 'class_imbalance' AND param = 'threshold_imbalance')) AS threshold_imbalance,
         rule_real((SELECT value FROM rule_param WHERE rule = 'class_imbalance' AND param = 'threshold_misprediction')) AS threshold_misprediction,
         rule_real((SELECT value FROM rule_param WHERE rule = 'class_imbalance' AND param = 'samples')) AS samples
),
k AS (
  SELECT s.* FROM rule_batch c
  JOIN rule_class_imbalance_count s ON s.trial = c.trial AND s.step = c.step
),
tot AS (
  SELECT sum(n) AS total, max(n) AS most, min(n) AS least FROM k
)
SELECT c.trial, c.step, 'imbalance' AS tensor, 'worker_0' AS worker,
       rule_div(tot.most, tot.least) AS value,
       printf('the largest class has %d labels, the smallest %d', tot.most, tot.least) AS message
FROM rule_batch c, tot, cfg
WHERE tot.total >= cfg.samples AND rule_div(tot.most, tot.least) > cfg.threshold_imbalance
UNION ALL
SELECT c.trial, c.step, 'class_' || rule_number_text(k.class), 'worker_0',
       CAST(k.wrong AS REAL) / k.n,
       printf('%d of %d labels of class %s were mispredicted', k.wrong, k.n, rule_number_text(k.class))
FROM rule_batch c, k, tot, cfg
WHERE tot.total >= cfg.samples AND CAST(k.wrong AS REAL) / k.n > cfg.threshold_misprediction;

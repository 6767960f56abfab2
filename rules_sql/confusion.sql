-- confusion [category_no=auto, labels="labels", predictions="predictions", min_diag=0.9,
--   max_off_diag=0.1]
-- Per step and worker where both tensors (named exactly) are saved: C[label][prediction]
-- counts. For each true class i with samples: finding `class_<i>` when C[i][i] / row_i <
-- min_diag or any C[i][j] / row_i > max_off_diag (j != i). value = C[i][i] / row_i.
-- (category_no only widens the matrix, which adds classes without samples: no findings.)
INSERT OR IGNORE INTO rule_param(trial, rule, param, value) VALUES
  (NULL, 'confusion', 'category_no', 'auto'),
  (NULL, 'confusion', 'labels', 'labels'),
  (NULL, 'confusion', 'predictions', 'predictions'),
  (NULL, 'confusion', 'min_diag', '0.9'),
  (NULL, 'confusion', 'max_off_diag', '0.1');

-- The rule's parameters in effect for the batch's trial, one typed column each.
DROP VIEW IF EXISTS rule_confusion_cfg;
CREATE VIEW rule_confusion_cfg AS
SELECT max(value) FILTER (WHERE param = 'labels') AS labels,
       max(value) FILTER (WHERE param = 'predictions') AS predictions,
       rule_real(max(value) FILTER (WHERE param = 'min_diag')) AS min_diag,
       rule_real(max(value) FILTER (WHERE param = 'max_off_diag')) AS max_off_diag
FROM rule_params
WHERE rule = 'confusion';

DROP VIEW IF EXISTS rule_confusion;
CREATE VIEW rule_confusion AS
WITH cells AS (
  SELECT l.trial, l.step, l.worker,
         (SELECT e.value FROM json_each(j.value) e WHERE e.key = 0) AS i,
         (SELECT e.value FROM json_each(j.value) e WHERE e.key = 1) AS j,
         (SELECT e.value FROM json_each(j.value) e WHERE e.key = 2) AS n
  FROM rule_confusion_cfg AS cfg
  JOIN rule_now l ON l.tensor = cfg.labels
  JOIN rule_now p ON p.step = l.step AND p.tensor = cfg.predictions AND p.worker = l.worker,
  json_each(rule_label_pairs(l.value, p.value, 0)) j
),
rows AS (
  SELECT trial, step, worker, i,
         sum(n) AS total,
         sum(CASE WHEN i = j THEN n ELSE 0 END) AS diag,
         max(CASE WHEN i <> j THEN n ELSE 0 END) AS off
  FROM cells
  GROUP BY trial, step, worker, i
)
SELECT trial, step, 'class_' || rule_number_text(i) AS tensor, worker,
       CAST(diag AS REAL) / total AS value,
       printf('class %s: %.3g%% of %d predicted right (at least %.3g%%), at most %.3g%% as one other class (at most %.3g%%)',
              rule_number_text(i), 100.0 * diag / total, total, 100 * cfg.min_diag, 100.0 * off / total, 100 * cfg.max_off_diag) AS message
FROM rows, rule_confusion_cfg AS cfg
WHERE CAST(diag AS REAL) / total < cfg.min_diag OR CAST(off AS REAL) / total > cfg.max_off_diag;

-- @rule confusion batch
-- @param category_no  integer|auto auto        classes of the matrix (auto: from the values); more adds classes without samples
-- @param labels       text         labels      the labels tensor (its exact name)
-- @param predictions  text         predictions the predictions tensor (its exact name)
-- @param min_diag     real         0.9         a class predicted right less often than this is a finding
-- @param max_off_diag real         0.1         a class predicted as one other class more often than this is a finding
--
-- Per step and worker where both tensors (named exactly) are saved: C[label][prediction]
-- counts. For each true class i with samples: finding `class_<i>` when C[i][i] / row_i <
-- min_diag or any C[i][j] / row_i > max_off_diag (j != i). value = C[i][i] / row_i.
-- (category_no only widens the matrix, which adds classes without samples: no findings.)
-- A label or prediction is a class index: a value with a fraction is truncated toward zero
-- (numpy's astype(int)), and rule_confusion_note says once per trial that the tensors do not
-- hold class indices (an XGBoost binary:logistic job saves probabilities as predictions).
-- The batch's (label, prediction, count) cells per step and worker, labels and predictions as
-- class indices, with the first pair of the step and worker that held a value with a fraction
-- (example_label, example_prediction; NULL when none did).
DROP VIEW IF EXISTS rule_confusion_pairs;
CREATE VIEW rule_confusion_pairs AS
SELECT l.trial, l.step, l.worker, x.label, x.prediction, x.n, x.example_label, x.example_prediction
FROM rule_confusion_cfg AS cfg
JOIN rule_now l ON l.tensor = cfg.labels
JOIN rule_now p ON p.step = l.step AND p.tensor = cfg.predictions AND p.worker = l.worker
CROSS JOIN rule_label_pairs(l.value, p.value, 0) x;

DROP VIEW IF EXISTS rule_confusion;
CREATE VIEW rule_confusion AS
WITH cells AS (  -- C[i][j]
  SELECT trial, step, worker, label AS i, prediction AS j, sum(n) AS n
  FROM rule_confusion_pairs
  GROUP BY trial, step, worker, i, j
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

-- A note (the runner prints each once per trial and run): the tensors hold values that are not
-- class indices.
DROP VIEW IF EXISTS rule_confusion_note;
CREATE VIEW rule_confusion_note AS
SELECT x.trial,
       printf('%s holds values that are not class indices (e.g. %s at step %d), truncated toward zero as ' ||
              'numpy''s astype(int) does; save the predicted class (a thresholded or argmax''ed tensor) ' ||
              'and name it with --param confusion.predictions=NAME',
              CASE WHEN x.example_label <> CAST(x.example_label AS INTEGER) THEN cfg.labels ELSE cfg.predictions END,
              rule_number_text(CASE WHEN x.example_label <> CAST(x.example_label AS INTEGER) THEN x.example_label
                                    ELSE x.example_prediction END),
              x.step) AS note
FROM rule_confusion_pairs x, rule_confusion_cfg AS cfg
WHERE x.example_label IS NOT NULL
LIMIT 1;

-- @rule unchanged_tensor batch
-- @param collection_names list    ""    collections whose tensors are checked (with tensor_regex)
-- @param tensor_regex     regex   ""    tensors checked besides those of collection_names
-- @param num_steps        integer 3     saved steps over which a tensor must stay allclose
-- @param rtol             real    1e-5  relative tolerance of allclose
-- @param atol             real    1e-8  absolute tolerance of allclose
-- @param equal_nan        boolean false NaN equals NaN in allclose
--
-- At the tensor's k-th saved step S (k >= num_steps), window = its last num_steps saved steps
-- up to S; finding per worker when allclose(v_X, v_S) for every earlier X in the window
-- (numpy allclose with rtol, atol, equal_nan). value = num_steps.
--
-- State: per (tensor, worker) its last num_steps saved values (rule_now.real_value: NULL for
-- strings and complex, which are never unchanged), numbered k = 1, 2, ..., with their least and
-- largest element and NaN count (from distributions). A batch appends its values; a pair whose
-- extremes differ by more than allclose allows (atol + rtol * max|v_S|) is not close without
-- reading the blobs.
CREATE TABLE IF NOT EXISTS rule_unchanged_tensor_window (
  trial  TEXT NOT NULL,
  tensor TEXT NOT NULL,
  worker TEXT NOT NULL,
  k      INTEGER NOT NULL,   -- 1 for the tensor's first saved step, then 2, ...
  step   INTEGER NOT NULL,
  value  BLOB,
  lo     REAL,               -- its least and largest element and NaN count (NULL: unknown)
  hi     REAL,
  nan    INTEGER,
  PRIMARY KEY (trial, tensor, worker, k)
) WITHOUT ROWID;
-- A database whose runner kept the window without the extremes: moved over, extremes unknown.
CREATE TABLE IF NOT EXISTS rule_unchanged_tensor_hist (
  trial TEXT NOT NULL, tensor TEXT NOT NULL, worker TEXT NOT NULL, k INTEGER NOT NULL, step INTEGER NOT NULL, value BLOB,
  PRIMARY KEY (trial, tensor, worker, k)
) WITHOUT ROWID;
INSERT OR IGNORE INTO rule_unchanged_tensor_window(trial, tensor, worker, k, step, value)
SELECT trial, tensor, worker, k, step, value FROM rule_unchanged_tensor_hist;
DROP TABLE rule_unchanged_tensor_hist;

-- The batch's values of the selected tensors, numbered on from the window.
DROP VIEW IF EXISTS rule_unchanged_tensor_input;
CREATE VIEW rule_unchanged_tensor_input AS
WITH selection AS MATERIALIZED (
  SELECT tensor FROM rule_selected_tensors WHERE rule = 'unchanged_tensor'
)
SELECT n.trial, n.tensor, n.worker, n.step, n.real_value AS value, d.p0 AS lo, d.p100 AS hi, d.nan,
       ifnull((SELECT max(h.k) FROM rule_unchanged_tensor_window h
               WHERE h.trial = n.trial AND h.tensor = n.tensor AND h.worker = n.worker), 0)
         + row_number() OVER (PARTITION BY n.tensor, n.worker ORDER BY n.step) AS k
FROM selection
CROSS JOIN rule_now_by_tensor n
LEFT JOIN rule_now_distribution d ON d.step = n.step AND d.tensor = n.tensor AND d.worker = n.worker
WHERE n.tensor = selection.tensor;

DROP TRIGGER IF EXISTS rule_unchanged_tensor_fold;
CREATE TRIGGER rule_unchanged_tensor_fold
AFTER UPDATE OF step ON rule_progress
WHEN new.rule = 'unchanged_tensor'
BEGIN
  -- Keep the window: the newest num_steps values of each series, then the batch's.
  DELETE FROM rule_unchanged_tensor_window
  WHERE trial = new.trial
    AND k <= (SELECT max(h.k) FROM rule_unchanged_tensor_window h
              WHERE h.trial = rule_unchanged_tensor_window.trial
                AND h.tensor = rule_unchanged_tensor_window.tensor
                AND h.worker = rule_unchanged_tensor_window.worker)
           - max(1, (SELECT num_steps FROM rule_unchanged_tensor_cfg));
  INSERT INTO rule_unchanged_tensor_window(trial, tensor, worker, k, step, value, lo, hi, nan)
  SELECT trial, tensor, worker, k, step, value, lo, hi, nan FROM rule_unchanged_tensor_input;
END;

DROP VIEW IF EXISTS rule_unchanged_tensor;
CREATE VIEW rule_unchanged_tensor AS
SELECT s.trial, s.step, s.tensor, s.worker, cfg.num_steps AS value,
       printf('unchanged over its last %d saved steps (rtol %g, atol %g)', cfg.num_steps, cfg.rtol, cfg.atol) AS message
FROM rule_batch c
JOIN rule_unchanged_tensor_window s ON s.trial = c.trial AND s.step = c.step
CROSS JOIN rule_unchanged_tensor_cfg AS cfg
WHERE s.k >= cfg.num_steps
  AND NOT EXISTS (SELECT 1 FROM rule_unchanged_tensor_window x
                  WHERE x.trial = s.trial AND x.tensor = s.tensor AND x.worker = s.worker
                    AND x.k < s.k AND x.k > s.k - cfg.num_steps
                    AND NOT ifnull(CASE WHEN x.nan = 0 AND s.nan = 0   -- extremes apart: not close (a margin for rounding)
                                             AND max(abs(x.lo - s.lo), abs(x.hi - s.hi))
                                                 > (cfg.atol + cfg.rtol * max(abs(s.lo), abs(s.hi))) * (1 + 1e-9)
                                        THEN 0
                                        WHEN tensor_shape(x.value) = tensor_shape(s.value)   -- else not close
                                        THEN tensor_allclose(x.value, s.value, cfg.rtol, cfg.atol, cfg.equal_nan) END, 0));

-- loss_not_decreasing [collection_names, tensor_regex, use_losses_collection=true,
--   num_steps=10, diff_percent=0, mode=none]
-- Tensors = selection, plus collection `losses` when use_losses_collection. Per tensor, mode
-- M = the given mode, else the first of EVAL, TRAIN, GLOBAL in which the tensor has values
-- (GLOBAL: all its steps, numbered by global step). Walk its saved mode steps m ascending;
-- with `last` = the last checked mode step: check at m when some saved m' <= m - num_steps
-- exists and (no check yet or m >= last + num_steps); then last = m and P = the largest such
-- m'. Finding (at m's global step) when loss_P - loss_m <= |loss_P| * diff_percent / 100.
-- value = loss_m. Losses are the mean of worker_0's value.
--
-- State: per tensor the mode walked so far, `last`, and the saved (m, loss) from the newest
-- candidate P on (older ones can never be P again). Without a given mode, a tensor walks the
-- best mode it has shown so far; when a better one first appears (EVAL after TRAIN, say) the
-- walk restarts in it and the tensor's findings from the old mode are dropped, so once the
-- trial has ended the findings are exactly the definition's.
INSERT OR REPLACE INTO rule_catalog(rule, kind) VALUES ('loss_not_decreasing', 'step');   -- its state is folded one step at a time

INSERT OR IGNORE INTO rule_params(trial, rule, param, value) VALUES
  (NULL, 'loss_not_decreasing', 'collection_names', ''),
  (NULL, 'loss_not_decreasing', 'tensor_regex', ''),
  (NULL, 'loss_not_decreasing', 'use_losses_collection', 'true'),
  (NULL, 'loss_not_decreasing', 'num_steps', '10'),
  (NULL, 'loss_not_decreasing', 'diff_percent', '0'),
  (NULL, 'loss_not_decreasing', 'mode', 'none');

CREATE TABLE IF NOT EXISTS rule_loss_not_decreasing_state (
  trial   TEXT NOT NULL,
  tensor  TEXT NOT NULL,
  mode    TEXT NOT NULL,      -- EVAL, TRAIN or GLOBAL (= every step, numbered by global step)
  last_m  INTEGER,            -- the last checked mode step
  step    INTEGER NOT NULL,   -- the last global step folded in, its m and loss
  m       INTEGER NOT NULL,
  loss    REAL,
  p_m     INTEGER,            -- P at `step` when it was checked there
  p_loss  REAL,
  checked INTEGER NOT NULL,
  PRIMARY KEY (trial, tensor)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS rule_loss_not_decreasing_hist (
  trial  TEXT NOT NULL,
  tensor TEXT NOT NULL,
  m      INTEGER NOT NULL,
  loss   REAL,
  PRIMARY KEY (trial, tensor, m)
) WITHOUT ROWID;

-- The selected losses saved at the cursor step, with the mode they belong to.
DROP VIEW IF EXISTS rule_loss_not_decreasing_input;
CREATE VIEW rule_loss_not_decreasing_input AS
WITH cfg AS (
  SELECT rule_bool((SELECT value FROM rule_param WHERE rule = 'loss_not_decreasing' AND param = 'use_losses_collection')) AS use_losses,
         upper(nullif(nullif((SELECT value FROM rule_param WHERE rule = 'loss_not_decreasing' AND param = 'mode'), ''), 'none')) AS mode
),
x AS MATERIALIZED (
  SELECT n.trial, n.tensor, n.step, n.mode_step, tensor_reduce(n.value, 'mean') AS loss,
         CASE WHEN cfg.mode IS NULL THEN (CASE WHEN n.mode IN ('EVAL', 'TRAIN') THEN n.mode ELSE 'GLOBAL' END)
              WHEN cfg.mode = 'GLOBAL' THEN 'GLOBAL'
              WHEN cfg.mode = n.mode THEN n.mode
         END AS m_mode
  FROM rule_now_primary n, cfg
  WHERE n.tensor IN (SELECT tensor FROM rule_selected_tensors WHERE rule = 'loss_not_decreasing'
                     UNION ALL
                     SELECT tensor FROM rule_collections WHERE collection = 'losses' AND cfg.use_losses)
)
SELECT x.trial, x.tensor, x.step, x.m_mode AS mode,
       CASE WHEN x.m_mode = 'GLOBAL' THEN x.step ELSE x.mode_step END AS m,
       x.loss,
       s.mode AS state_mode,
       CASE x.m_mode WHEN 'EVAL' THEN 3 WHEN 'TRAIN' THEN 2 ELSE 1 END
         - CASE s.mode WHEN 'EVAL' THEN 3 WHEN 'TRAIN' THEN 2 WHEN 'GLOBAL' THEN 1 ELSE 0 END AS rank_gain
FROM x
LEFT JOIN rule_loss_not_decreasing_state s ON s.trial = x.trial AND s.tensor = x.tensor
WHERE x.m_mode IS NOT NULL;

-- The new state of the tensors whose walk continues at the cursor step.
DROP VIEW IF EXISTS rule_loss_not_decreasing_next;
CREATE VIEW rule_loss_not_decreasing_next AS
WITH cfg AS (
  SELECT rule_real((SELECT value FROM rule_param WHERE rule = 'loss_not_decreasing' AND param = 'num_steps')) AS num_steps
),
p AS (
  SELECT i.trial, i.tensor, i.mode, i.step, i.m, i.loss, s.last_m,
         (SELECT h.m FROM rule_loss_not_decreasing_hist h
          WHERE h.trial = i.trial AND h.tensor = i.tensor AND h.m <= i.m - cfg.num_steps
          ORDER BY h.m DESC LIMIT 1) AS p_m
  FROM rule_loss_not_decreasing_input i
  CROSS JOIN cfg
  LEFT JOIN rule_loss_not_decreasing_state s ON s.trial = i.trial AND s.tensor = i.tensor
  WHERE i.rank_gain >= 0
),
q AS (
  SELECT p.*, (p.p_m IS NOT NULL AND (p.last_m IS NULL OR p.m >= p.last_m + cfg.num_steps)) AS checked
  FROM p, cfg
)
SELECT q.trial, q.tensor, q.mode,
       CASE WHEN q.checked THEN q.m ELSE q.last_m END AS last_m,
       q.step, q.m, q.loss, q.p_m,
       (SELECT h.loss FROM rule_loss_not_decreasing_hist h
        WHERE h.trial = q.trial AND h.tensor = q.tensor AND h.m = q.p_m) AS p_loss,
       q.checked
FROM q;

DROP TRIGGER IF EXISTS rule_loss_not_decreasing_fold;
CREATE TRIGGER rule_loss_not_decreasing_fold
AFTER UPDATE OF step ON rule_progress
WHEN new.rule = 'loss_not_decreasing'
BEGIN
  -- A better mode appeared: restart the walk there.
  DELETE FROM rule_finding
  WHERE trial = new.trial AND rule = 'loss_not_decreasing'
    AND tensor IN (SELECT tensor FROM rule_loss_not_decreasing_input
                   WHERE state_mode IS NOT NULL AND rank_gain > 0);
  DELETE FROM rule_loss_not_decreasing_hist
  WHERE trial = new.trial
    AND tensor IN (SELECT tensor FROM rule_loss_not_decreasing_input
                   WHERE state_mode IS NOT NULL AND rank_gain > 0);
  DELETE FROM rule_loss_not_decreasing_state
  WHERE trial = new.trial
    AND tensor IN (SELECT tensor FROM rule_loss_not_decreasing_input
                   WHERE state_mode IS NOT NULL AND rank_gain > 0);
  -- Fold the step in.
  INSERT OR REPLACE INTO rule_loss_not_decreasing_state
    (trial, tensor, mode, last_m, step, m, loss, p_m, p_loss, checked)
  SELECT trial, tensor, mode, last_m, step, m, loss, p_m, p_loss, checked
  FROM rule_loss_not_decreasing_next;
  INSERT OR REPLACE INTO rule_loss_not_decreasing_hist(trial, tensor, m, loss)
  SELECT trial, tensor, m, loss FROM rule_loss_not_decreasing_state
  WHERE trial = new.trial AND step = new.step;
  -- Saved steps before the newest candidate P can never be P again.
  DELETE FROM rule_loss_not_decreasing_hist
  WHERE trial = new.trial
    AND m < (SELECT s.p_m FROM rule_loss_not_decreasing_state s
             WHERE s.trial = rule_loss_not_decreasing_hist.trial
               AND s.tensor = rule_loss_not_decreasing_hist.tensor);
END;

DROP VIEW IF EXISTS rule_loss_not_decreasing;
CREATE VIEW rule_loss_not_decreasing AS
WITH cfg AS (
  SELECT rule_real((SELECT value FROM rule_param WHERE rule = 'loss_not_decreasing' AND param = 'diff_percent')) AS diff_percent
)
SELECT s.trial, s.step, s.tensor, 'worker_0' AS worker, s.loss AS value,
       printf('%s loss %g at mode step %d did not decrease from %g at mode step %d',
              s.mode, s.loss, s.m, s.p_loss, s.p_m) AS message
FROM rule_batch c
JOIN rule_loss_not_decreasing_state s ON s.trial = c.trial AND s.step = c.step
CROSS JOIN cfg
WHERE s.checked AND s.p_loss - s.loss <= abs(s.p_loss) * cfg.diff_percent / 100.0;

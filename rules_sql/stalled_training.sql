-- stalled_training [threshold=1800 s]
-- While following a live trial that has not ended, finding when no new step has completed for
-- `threshold` seconds (wall clock of the ingester); step = the last complete step, tensor
-- label `no_progress`, value = the seconds since. Never fires on an ended trial.
--
-- A 'clock' rule: the runner evaluates it on every run (not once per step), with the cursor at
-- the trial's last complete step. rule_trial_clock holds when the runner first saw that step
-- complete; the finding is recorded once per stalled step.
INSERT OR REPLACE INTO rule_catalog(rule, kind) VALUES ('stalled_training', 'clock');

INSERT OR IGNORE INTO rule_param(trial, rule, param, value) VALUES
  (NULL, 'stalled_training', 'threshold', '1800');

-- The rule's parameters in effect for the batch's trial, one typed column each.
DROP VIEW IF EXISTS rule_stalled_training_cfg;
CREATE VIEW rule_stalled_training_cfg AS
SELECT rule_real(max(value) FILTER (WHERE param = 'threshold')) AS threshold
FROM rule_params
WHERE rule = 'stalled_training';

DROP VIEW IF EXISTS rule_stalled_training;
CREATE VIEW rule_stalled_training AS
SELECT c.trial, k.last_step AS step, 'no_progress' AS tensor, 'worker_0' AS worker,
       c.now - k.progress_at AS value,
       printf('no step completed for %d s since step %d', CAST(c.now - k.progress_at AS INTEGER), k.last_step) AS message
FROM rule_batch c
JOIN rule_trial_clock k ON k.trial = c.trial AND k.last_step = c.step
JOIN trials t ON t.trial = c.trial
CROSS JOIN rule_stalled_training_cfg AS cfg
WHERE NOT t.ended AND c.now - k.progress_at >= cfg.threshold;

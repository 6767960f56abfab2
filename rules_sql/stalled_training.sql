-- @rule stalled_training clock
-- @param threshold real 1800 seconds without a new complete step before a finding
--
-- While following a live trial that has not ended, finding when no new step has completed for
-- `threshold` seconds (wall clock of the ingester); step = the last complete step, tensor
-- label `no_progress`, value = the seconds since. Never fires on an ended trial.
--
-- A 'clock' rule: the runner evaluates it on every run (not once per step), with the cursor at
-- the trial's last complete step. rule_trial_clock holds when the runner first saw that step
-- complete; the finding is recorded once per stalled step.
DROP VIEW IF EXISTS rule_stalled_training;
CREATE VIEW rule_stalled_training AS
SELECT c.trial, k.last_step AS step, 'no_progress' AS tensor, (SELECT worker FROM rule_primary_worker) AS worker,
       c.now - k.progress_at AS value,
       printf('no step completed for %d s since step %d', CAST(c.now - k.progress_at AS INTEGER), k.last_step) AS message
FROM rule_batch c
JOIN rule_trial_clock k ON k.trial = c.trial AND k.last_step = c.step
JOIN trials t ON t.trial = c.trial
CROSS JOIN rule_stalled_training_cfg AS cfg
WHERE NOT t.ended AND c.now - k.progress_at >= cfg.threshold;

-- check_input_images [threshold_mean=0.2, threshold_samples=500,
--   regex=".*hybridsequential0_input_0", channel=1]
-- Per matching 4-d tensor, running per-channel sums over all saved steps so far (channel axis
-- = `channel`); once the running sample count (axis 0) >= threshold_samples, finding when any
-- channel's running mean has |mean| > threshold_mean. value = the largest |mean|.
-- Values of worker_0.
--
-- State: per tensor the running sample count, elements per channel and per-channel sums.
-- (JSON is read with json_each and written with group_concat, never with json_extract,
-- json_array_length or json_group_array: rules_base.sql.)
INSERT OR REPLACE INTO rule_catalog(rule, kind) VALUES ('check_input_images', 'step');   -- its state is folded one step at a time

INSERT OR IGNORE INTO rule_params(trial, rule, param, value) VALUES
  (NULL, 'check_input_images', 'threshold_mean', '0.2'),
  (NULL, 'check_input_images', 'threshold_samples', '500'),
  (NULL, 'check_input_images', 'regex', '.*hybridsequential0_input_0'),
  (NULL, 'check_input_images', 'channel', '1');

CREATE TABLE IF NOT EXISTS rule_check_input_images_state (
  trial    TEXT NOT NULL,
  tensor   TEXT NOT NULL,
  step     INTEGER NOT NULL,   -- the last step folded in
  samples  INTEGER NOT NULL,   -- running size of axis 0
  elements INTEGER NOT NULL,   -- running elements per channel
  sums     TEXT NOT NULL,      -- JSON array: running sum per channel
  PRIMARY KEY (trial, tensor)
) WITHOUT ROWID;

DROP VIEW IF EXISTS rule_check_input_images_next;
CREATE VIEW rule_check_input_images_next AS
WITH cfg AS (
  SELECT nullif((SELECT value FROM rule_param WHERE rule = 'check_input_images' AND param = 'regex'), '') AS regex,
         CAST(rule_real((SELECT value FROM rule_param WHERE rule = 'check_input_images' AND param = 'channel')) AS INTEGER) AS channel
),
x AS MATERIALIZED (
  SELECT n.trial, n.tensor, n.step, rule_channel_sums(n.value, cfg.channel) AS sums,
         (SELECT d.value FROM json_each(n.shape) d WHERE d.key = 0) AS samples,
         tensor_numel(n.value) / (SELECT d.value FROM json_each(n.shape) d WHERE d.key = ifnull(cfg.channel, 0)) AS elements
  FROM rule_now_primary n, cfg
  WHERE rule_regexp_any(cfg.regex, n.tensor) AND (SELECT count(*) FROM json_each(n.shape)) = 4
)
SELECT x.trial, x.tensor, x.step,
       ifnull(s.samples, 0) + x.samples AS samples,
       ifnull(s.elements, 0) + x.elements AS elements,
       CASE WHEN s.sums IS NULL OR (SELECT count(*) FROM json_each(s.sums)) <> (SELECT count(*) FROM json_each(x.sums))
            THEN x.sums
            ELSE (SELECT '[' || ifnull(group_concat(ifnull(a.value + b.value, 'null'), ','), '') || ']'
                  FROM json_each(s.sums) a JOIN json_each(x.sums) b ON b.key = a.key) END AS sums
FROM x
LEFT JOIN rule_check_input_images_state s ON s.trial = x.trial AND s.tensor = x.tensor
WHERE x.sums IS NOT NULL;

DROP TRIGGER IF EXISTS rule_check_input_images_fold;
CREATE TRIGGER rule_check_input_images_fold
AFTER UPDATE OF step ON rule_progress
WHEN new.rule = 'check_input_images'
BEGIN
  INSERT OR REPLACE INTO rule_check_input_images_state(trial, tensor, step, samples, elements, sums)
  SELECT trial, tensor, step, samples, elements, sums FROM rule_check_input_images_next;
END;

DROP VIEW IF EXISTS rule_check_input_images;
CREATE VIEW rule_check_input_images AS
WITH cfg AS (
  SELECT rule_real((SELECT value FROM rule_param WHERE rule = 'check_input_images' AND param = 'threshold_mean')) AS threshold_mean,
         rule_real((SELECT value FROM rule_param WHERE rule = 'check_input_images' AND param = 'threshold_samples')) AS threshold_samples
),
m AS (
  SELECT s.trial, s.step, s.tensor, s.samples,
         (SELECT max(abs(j.value / s.elements)) FROM json_each(s.sums) j) AS max_mean
  FROM rule_batch c
  JOIN rule_check_input_images_state s ON s.trial = c.trial AND s.step = c.step
)
SELECT m.trial, m.step, m.tensor, 'worker_0' AS worker, m.max_mean AS value,
       printf('a channel''s mean over %d samples is %g (threshold %g)', m.samples, m.max_mean, cfg.threshold_mean) AS message
FROM m, cfg
WHERE m.samples >= cfg.threshold_samples AND m.max_mean > cfg.threshold_mean;

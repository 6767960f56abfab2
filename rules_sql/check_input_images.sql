-- @rule check_input_images batch
-- @param threshold_mean    real    0.2                         a channel mean farther from 0 than this is a finding
-- @param threshold_samples integer 500                         samples seen before the rule judges
-- @param regex             regex   .*hybridsequential0_input_0 the input images checked
-- @param channel           integer 1                           the channel axis
--
-- Per matching 4-d tensor, running per-channel sums over all saved steps so far (channel axis
-- = `channel`); once the running sample count (axis 0) >= threshold_samples, finding when any
-- channel's running mean has |mean| > threshold_mean. value = the largest |mean|.
-- Values of the primary worker (rule_primary_worker).
--
-- State: per tensor the running sample count, elements per channel and per-channel sums (a
-- step with another number of channels than the step before starts the sums again). A batch
-- carries them over its steps with window sums per channel; the counts and the largest |mean|
-- after each step are kept until the next batch, for the findings.
-- (JSON is read with json_each and written with group_concat, never with json_extract,
-- json_array_length or json_group_array: rules_base.sql.)
CREATE TABLE IF NOT EXISTS rule_check_input_images_state (
  trial    TEXT NOT NULL,
  tensor   TEXT NOT NULL,
  step     INTEGER NOT NULL,   -- the last step folded in
  samples  INTEGER NOT NULL,   -- running size of axis 0
  elements INTEGER NOT NULL,   -- running elements per channel
  sums     TEXT NOT NULL,      -- JSON array: running sum per channel
  PRIMARY KEY (trial, tensor)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS rule_check_input_images_walk (
  trial    TEXT NOT NULL,
  tensor   TEXT NOT NULL,
  step     INTEGER NOT NULL,   -- a step of the last batch that added, and the running values after it
  samples  INTEGER NOT NULL,
  elements INTEGER NOT NULL,
  max_mean REAL,               -- the largest |running mean| of a channel
  sums     TEXT,               -- the running sums (JSON), at the last step of the tensor only
  PRIMARY KEY (trial, tensor, step)
) WITHOUT ROWID;

DROP VIEW IF EXISTS rule_check_input_images_next;
DROP VIEW IF EXISTS rule_check_input_images_steps;
CREATE VIEW rule_check_input_images_steps AS
WITH selection AS MATERIALIZED (
  SELECT t.tensor FROM tensors t, rule_check_input_images_cfg AS cfg
  WHERE t.trial = (SELECT trial FROM rule_batch LIMIT 1) AND rule_regexp_any(cfg.regex, t.tensor)
),
x AS MATERIALIZED (  -- the batch's images: per-channel sums, samples and elements per channel
  SELECT n.trial, n.tensor, n.step, rule_channel_sums(n.value, cfg.channel) AS sums,
         (SELECT d.value FROM json_each(n.shape) d WHERE d.key = 0) AS samples,
         tensor_numel(n.value) / (SELECT d.value FROM json_each(n.shape) d WHERE d.key = ifnull(cfg.channel, 0)) AS elements
  FROM selection CROSS JOIN rule_now_by_tensor n, rule_check_input_images_cfg AS cfg
  WHERE n.tensor = selection.tensor
    AND n.worker = (SELECT worker FROM rule_primary_worker)
    AND (SELECT count(*) FROM json_each(n.shape)) = 4
),
state AS (
  SELECT s.*, (SELECT count(*) FROM json_each(s.sums)) AS channels
  FROM rule_check_input_images_state s
  WHERE s.trial = (SELECT trial FROM rule_batch LIMIT 1)
),
r AS (  -- segment 0 continues the state's sums; each change of the channel count starts another
  SELECT c.*, sum(c.starts) OVER (PARTITION BY c.tensor ORDER BY c.step) AS segment
  FROM (
    SELECT x.*, ifnull(st.samples, 0) + sum(x.samples) OVER w AS run_samples,
           ifnull(st.elements, 0) + sum(x.elements) OVER w AS run_elements,
           (SELECT count(*) FROM json_each(x.sums)) IS NOT
             coalesce(lag((SELECT count(*) FROM json_each(x.sums))) OVER w, st.channels) AS starts
    FROM x
    LEFT JOIN state st ON st.tensor = x.tensor
    WHERE x.sums IS NOT NULL
    WINDOW w AS (PARTITION BY x.tensor ORDER BY x.step)
  ) c
),
channels AS (  -- running sum per channel (NULL once a sum was NaN)
  SELECT r.trial, r.tensor, r.step, r.run_samples, r.run_elements, j.key AS channel,
         CASE WHEN sum(j.value IS NULL) OVER w > 0 OR (r.segment = 0 AND ss.key IS NOT NULL AND ss.value IS NULL) THEN NULL
              ELSE sum(j.value) OVER w + CASE WHEN r.segment = 0 THEN ifnull(ss.value, 0) ELSE 0 END END AS total
  FROM r
  JOIN json_each(r.sums) j
  LEFT JOIN (SELECT st.tensor, e.key, e.value FROM state st, json_each(st.sums) e) ss
    ON r.segment = 0 AND ss.tensor = r.tensor AND ss.key = j.key
  WINDOW w AS (PARTITION BY r.tensor, r.segment, j.key ORDER BY r.step)
),
steps AS (
  SELECT trial, tensor, step, run_samples AS samples, run_elements AS elements,
         max(abs(total / run_elements)) AS max_mean,
         max(step) OVER (PARTITION BY tensor) AS last_step
  FROM channels
  GROUP BY trial, tensor, step
)
SELECT s.trial, s.tensor, s.step, s.samples, s.elements, s.max_mean,
       CASE WHEN s.step = s.last_step
            THEN (SELECT '[' || ifnull(group_concat(ifnull(c.total, 'null'), ','), '') || ']'
                  FROM (SELECT c.total FROM channels c WHERE c.tensor = s.tensor AND c.step = s.step ORDER BY c.channel) c)
       END AS sums
FROM steps s;

DROP TRIGGER IF EXISTS rule_check_input_images_fold;
CREATE TRIGGER rule_check_input_images_fold
AFTER UPDATE OF step ON rule_progress
WHEN new.rule = 'check_input_images'
BEGIN
  DELETE FROM rule_check_input_images_walk WHERE trial = new.trial;
  INSERT INTO rule_check_input_images_walk(trial, tensor, step, samples, elements, max_mean, sums)
  SELECT trial, tensor, step, samples, elements, max_mean, sums FROM rule_check_input_images_steps;
  INSERT OR REPLACE INTO rule_check_input_images_state(trial, tensor, step, samples, elements, sums)
  SELECT trial, tensor, step, samples, elements, sums
  FROM rule_check_input_images_walk
  WHERE trial = new.trial AND sums IS NOT NULL;
END;

DROP VIEW IF EXISTS rule_check_input_images;
CREATE VIEW rule_check_input_images AS
SELECT m.trial, m.step, m.tensor, (SELECT worker FROM rule_primary_worker) AS worker, m.max_mean AS value,
       printf('a channel''s mean over %d samples is %g (threshold %g)', m.samples, m.max_mean, cfg.threshold_mean) AS message
FROM rule_batch c
JOIN rule_check_input_images_walk m ON m.trial = c.trial AND m.step = c.step
CROSS JOIN rule_check_input_images_cfg AS cfg
WHERE m.samples >= cfg.threshold_samples AND m.max_mean > cfg.threshold_mean;

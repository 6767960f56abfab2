-- What `trialdb info --tensors` lists (src/tensor_listing.h), as an aggregate over the public
-- views: every tensor of every trial, by trial and tensor name, with the distinct dtypes and shapes
-- of its tensor_values rows in the order of their first global step (ties by name), and its
-- distinct global steps and workers. The tests compare the listing, which reads the tensors'
-- summary (schema/tensor_summary.h), with this.
SELECT t.trial, t.tensor,
       (SELECT group_concat(dtype, ',') FROM (
          SELECT v.dtype FROM tensor_values v
          WHERE v.trial = t.trial AND v.tensor = t.tensor AND v.dtype IS NOT NULL
          GROUP BY v.dtype ORDER BY min(v.global_step), v.dtype)) AS dtype,
       (SELECT group_concat(shape, ',') FROM (
          SELECT v.shape FROM tensor_values v
          WHERE v.trial = t.trial AND v.tensor = t.tensor AND v.shape IS NOT NULL
          GROUP BY v.shape ORDER BY min(v.global_step), v.shape)) AS shape,
       (SELECT count(DISTINCT v.global_step) FROM tensor_values v
        WHERE v.trial = t.trial AND v.tensor = t.tensor) AS steps,
       (SELECT count(DISTINCT v.worker) FROM tensor_values v
        WHERE v.trial = t.trial AND v.tensor = t.tensor) AS workers
FROM tensors t
ORDER BY t.trial, t.tensor

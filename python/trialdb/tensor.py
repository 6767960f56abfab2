"""A tensor of a trial, with smdebug's Tensor API: steps, value(s), reduction value(s), shape,
workers and prev_steps, each with smdebug's step numbering and exceptions.

Steps: with mode GLOBAL (the default) a step is the step smdebug files a value under, which is
tensor_values.step (the global step, except for values saved in GLOBAL mode, whose step is their
mode step); with another mode it is that mode's step (tensor_values.mode_step). Without a worker,
the first of the step's workers by name is read, as smdebug does."""
import bisect
import json

from .blob import decode, shape as blob_shape
from .exceptions import (InvalidWorker, NoMoreData, ShapeUnavailableForStep, StepNotYetAvailable, StepUnavailable,
                         TensorUnavailableForStep)
from .modes import ModeKeys, mode_name

REDUCTION_NAMES = ("min", "max", "mean", "prod", "std", "variance", "sum", "l1", "l2")


def _step_filter(mode, step_num):
    """The WHERE clause and parameters that find a step in tensor_values or reductions."""
    name = mode_name(mode)
    if name == "GLOBAL":
        return "step = ?", (step_num,)
    return "mode = ? AND mode_step = ?", (name, step_num)


class Tensor:
    """trial.tensor(name): one tensor of a trial."""

    def __init__(self, trial, name):
        self.trial = trial
        self.name = name

    def __repr__(self):
        return "<trialdb.Tensor %r of trial %r>" % (self.name, self.trial.name)

    def _query(self, sql, *params):
        return self.trial.con.execute(sql, (self.trial.name, self.name) + params).fetchall()

    def steps(self, mode=ModeKeys.GLOBAL, show_incomplete_steps=False):
        """The steps at which the tensor was saved (only complete steps are in the views)."""
        name = mode_name(mode)
        if name == "GLOBAL":
            rows = self._query("SELECT DISTINCT step FROM tensor_values WHERE trial = ? AND tensor = ? ORDER BY step")
        else:
            rows = self._query("SELECT DISTINCT mode_step FROM tensor_values WHERE trial = ? AND tensor = ? AND mode = ? "
                               "ORDER BY mode_step", name)
        return [r[0] for r in rows]

    def _rows_at(self, step_num, mode):
        """(worker, value, shape) of every worker's row at the step; smdebug's _get_step_dict: a value
        saved in GLOBAL mode at that step number first, else the step of the other modes."""
        where, params = _step_filter(mode, step_num)
        rows = self._query("SELECT worker, value, shape, mode FROM tensor_values WHERE trial = ? AND tensor = ? AND " +
                           where + " ORDER BY worker", *params)
        saved_global = [r for r in rows if r[3] == "GLOBAL"]
        return [r[:3] for r in (saved_global or rows)]

    def _row(self, step_num, mode, worker):
        rows = self._rows_at(step_num, mode)
        if not rows:
            self._raise_missing_step(step_num, mode)
        if worker is None:
            return rows[0]
        for row in rows:
            if row[0] == worker:
                return row
        raise InvalidWorker(worker)

    def _raise_missing_step(self, step_num, mode):
        """smdebug's answer for a step the tensor has no row at: the trial has the step (the tensor
        was not saved there), passed it without saving it, or has not reached it."""
        steps = self.trial.steps(mode=mode, show_incomplete_steps=True)
        i = bisect.bisect_left(steps, step_num)
        if i < len(steps) and steps[i] == step_num:
            raise TensorUnavailableForStep(self.name, step_num, mode)
        if i < len(steps):
            raise StepUnavailable(step_num, mode)
        if self.trial.ended():
            raise NoMoreData("Looking for step:%s for mode %s and reached end of training. Max step available is %s"
                             % (step_num, mode_name(mode), steps[-1] if steps else -1))
        raise StepNotYetAvailable(step_num, mode)

    def _has_reductions(self, step_num, mode, worker):
        where, params = _step_filter(mode, step_num)
        return bool(self._query("SELECT 1 FROM reductions WHERE trial = ? AND tensor = ? AND worker = ? AND " + where +
                                " LIMIT 1", worker, *params))

    def value(self, step_num, mode=ModeKeys.GLOBAL, worker=None):
        """The value at the step as a numpy array."""
        worker_name, blob, _ = self._row(step_num, mode, worker)
        if blob is None:
            raise TensorUnavailableForStep(self.name, step_num, mode, self._has_reductions(step_num, mode, worker_name))
        return decode(blob)

    def values(self, mode=ModeKeys.GLOBAL, worker=None):
        """{step: value} over the tensor's steps of the mode."""
        return {step: self.value(step, mode=mode, worker=worker) for step in self.steps(mode=mode)}

    def reduction_value(self, step_num, reduction_name, mode=ModeKeys.GLOBAL, worker=None, abs=False):
        """A reduction of the value (of |x| with abs) as a float: the hook's when it saved one, else
        computed once at ingest in float64; computed from the value for dtypes the views do not reduce."""
        if reduction_name not in REDUCTION_NAMES:
            raise ValueError("not a reduction: %r (one of %s)" % (reduction_name, ", ".join(REDUCTION_NAMES)))
        worker_name, blob, _ = self._row(step_num, mode, worker)
        where, params = _step_filter(mode, step_num)
        rows = self._query("SELECT value FROM reductions WHERE trial = ? AND tensor = ? AND worker = ? AND reduction = ? "
                           "AND abs = ? AND " + where, worker_name, reduction_name, int(bool(abs)), *params)
        if rows:
            return float("nan") if rows[0][0] is None else rows[0][0]
        if blob is None:
            raise TensorUnavailableForStep(reduction_name, step_num, mode)
        return _numpy_reduction(decode(blob), reduction_name, abs)

    def reduction_values(self, step_num, mode=ModeKeys.GLOBAL, worker=None):
        """{(reduction, abs): value} of the reductions the hook saved at the step, as smdebug answers:
        a value saved raw has none (its reductions are reduction_value's to compute)."""
        worker_name, blob, _ = self._row(step_num, mode, worker)
        if blob is not None:
            return {}
        where, params = _step_filter(mode, step_num)
        rows = self._query("SELECT reduction, abs, value FROM reductions WHERE trial = ? AND tensor = ? AND worker = ? AND "
                           + where, worker_name, *params)
        return {(r, bool(a)): float("nan") if v is None else v for r, a, v in rows}

    def shape(self, step_num, mode=ModeKeys.GLOBAL, worker=None):
        """The value's shape as a tuple, as smdebug answers: the raw value's own (a 0-d value's is
        ()), else the shape the hook saved."""
        _, blob, shape = self._row(step_num, mode, worker)
        if blob is not None:
            return blob_shape(blob)
        if shape is None:
            raise ShapeUnavailableForStep(self.name, step_num, mode)
        return tuple(json.loads(shape))

    def workers(self, step_num, mode=ModeKeys.GLOBAL):
        """The workers that saved the tensor at the step."""
        rows = self._rows_at(step_num, mode)
        if not rows:
            raise TensorUnavailableForStep(self.name, step_num, mode)
        return [r[0] for r in rows]

    def prev_steps(self, step, n=None, mode=ModeKeys.GLOBAL):
        """The tensor's steps up to and including step, the last n of them when n is given."""
        steps = self.steps(mode=mode)
        earlier = steps[:bisect.bisect_right(steps, step)]
        return earlier[-n:] if n else earlier


def _numpy_reduction(value, reduction_name, abs):
    import numpy as np
    x = np.asarray(value, dtype=np.float64)
    if abs:
        x = np.abs(x)
    if reduction_name in ("l1", "l2"):
        return float(np.linalg.norm(x.ravel(), ord=1 if reduction_name == "l1" else 2))
    return float(getattr(np, {"min": "amin", "max": "amax"}.get(reduction_name, reduction_name))(x))

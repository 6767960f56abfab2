"""smdebug's exceptions (smdebug.exceptions), with the same names, arguments and meanings, so
code written against smdebug's Trial API catches what it expects."""
from .modes import ModeKeys


class TensorUnavailable(Exception):
    """The trial has no tensor of that name."""

    def __init__(self, tname):
        super().__init__(tname)
        self.tname = tname

    def __str__(self):
        return "Tensor %s was not saved." % self.tname


class TensorUnavailableForStep(Exception):
    """The step exists, but this tensor has no raw value there (none saved, or reductions only)."""

    def __init__(self, tname, step, mode=ModeKeys.GLOBAL, has_reductions=False):
        super().__init__(tname, step, mode, has_reductions)
        self.tname, self.step, self.mode, self.has_reductions = tname, step, mode, has_reductions

    def __str__(self):
        msg = "Value for tensor %s is not available for step %s with mode %s as it was not saved." % (
            self.tname, self.step, getattr(self.mode, "name", self.mode))
        if self.has_reductions:
            msg += " This tensor has reductions saved for this step. You might want to query for the reductions."
        return msg


class ShapeUnavailableForStep(Exception):
    def __init__(self, tname, step, mode=ModeKeys.GLOBAL):
        super().__init__(tname, step, mode)
        self.tname, self.step, self.mode = tname, step, mode

    def __str__(self):
        return "Shape for tensor %s is not available for step %s with mode %s as it was not saved." % (
            self.tname, self.step, getattr(self.mode, "name", self.mode))


class StepUnavailable(Exception):
    """The trial passed this step without saving it."""

    def __init__(self, step, mode):
        super().__init__(step, mode)
        self.step, self.mode = step, mode

    def __str__(self):
        return "Step %s of mode %s not available" % (self.step, getattr(self.mode, "name", self.mode))


class StepNotYetAvailable(Exception):
    """The step is past the last complete step of a trial that has not ended."""

    def __init__(self, step, mode):
        super().__init__(step, mode)
        self.step, self.mode = step, mode

    def __str__(self):
        return "Step %s of mode %s not yet available" % (self.step, getattr(self.mode, "name", self.mode))


class NoMoreData(Exception):
    """The step is past the end of a trial whose training has ended."""


class InvalidWorker(Exception):
    def __init__(self, worker):
        super().__init__(worker)
        self.worker = worker

    def __str__(self):
        return "Invalid Worker: %s" % self.worker

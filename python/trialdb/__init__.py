"""trialdb from Python: a trialdb database with smdebug's Trial API, numpy values, pandas frames.

Only the standard library is needed to import it; numpy is needed for values, pandas for frames
(each imported when first used). Values are decoded exactly as docs/BLOB_FORMAT.md describes, so
no extension is needed to read them; open() loads the trialdb extension when it is found.

    import trialdb
    from trialdb import modes
    t = trialdb.Trial("trials.db", "pt_bad_init")
    t.tensor_names(collection="gradients")
    t.steps(mode=modes.TRAIN)                                  # TRAIN's mode steps
    t.tensor("CrossEntropyLoss_output_0").value(2, mode=modes.EVAL)
    t.tensor("Net_fc.weight").reduction_value(5, "mean", abs=True)
    t.frame("reductions", reduction="l2", step=range(0, 10))   # pandas DataFrame of a view
    t.sql("SELECT tensor, max(value) FROM reductions WHERE trial = ? GROUP BY tensor", (t.name,))

The modules: blob (the value codec), connection (open), modes, exceptions (smdebug's), trial,
tensor, frame (frame()'s SQL), display (notebook HTML, charts).
"""
from .blob import decode
from .connection import open
from .exceptions import (InvalidWorker, NoMoreData, ShapeUnavailableForStep, StepNotYetAvailable, StepUnavailable,
                         TensorUnavailable, TensorUnavailableForStep)
from .modes import ModeKeys, modes
from .tensor import Tensor
from .trial import Collection, Trial

__all__ = ["open", "decode", "Trial", "Tensor", "Collection", "ModeKeys", "modes", "TensorUnavailable",
           "TensorUnavailableForStep", "ShapeUnavailableForStep", "StepUnavailable", "StepNotYetAvailable",
           "NoMoreData", "InvalidWorker"]

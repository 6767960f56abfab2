#!/usr/bin/python3
"""The first answer through smdebug, the reference of bench/run's "first answer" rows: the time
from a trial's event files to mean |gradient| of every gradient at every step, as a user of
smdebug's Trial API gets it (create_trial, then reduction_value for each gradient and step).

  bench/smdebug_first_answer.py TRIAL_FOLDER
prints "seconds=<s> values=<n> tensors=<n>" on standard output, or exits 2 when smdebug cannot
be imported (set SMDEBUG_PATH to a folder holding the smdebug package to use one that is not
installed). smdebug is not a dependency of trialdb: bench/run skips the row without it.
"""
import logging
import sys
import time

import smdebug_env

smdebug_env.require()
from smdebug.trials import create_trial  # noqa: E402 (after require: SMDEBUG_PATH)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    logging.disable(logging.WARNING)
    start = time.time()
    trial = create_trial(sys.argv[1])
    values = 0
    gradients = trial.tensor_names(collection="gradients")
    for name in gradients:
        tensor = trial.tensor(name)
        for step in tensor.steps():
            tensor.reduction_value(step, "mean", abs=True)
            values += 1
    print(f"seconds={time.time() - start:.3f} values={values} tensors={len(gradients)}")


if __name__ == "__main__":
    main()

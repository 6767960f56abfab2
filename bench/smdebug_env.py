"""How the bench scripts that use smdebug as their reference find it (bench/README.md): smdebug is
not a dependency of trialdb, so a script whose reference cannot be imported exits 2 with the
reason, and bench/run skips its row.

  import smdebug_env
  smdebug_env.require()          # SMDEBUG_PATH first on sys.path; exits 2 without smdebug or numpy
  from smdebug.trials import create_trial
"""
import importlib
import os
import sys


def require():
    if os.environ.get("SMDEBUG_PATH"):
        sys.path.insert(0, os.environ["SMDEBUG_PATH"])
    os.environ.setdefault("SMDEBUG_LOG_LEVEL", "error")
    try:
        for module in ("numpy", "smdebug.trials"):
            importlib.import_module(module)
    except ImportError as e:
        print(f"smdebug is not available: {e}", file=sys.stderr)
        sys.exit(2)

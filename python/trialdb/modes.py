"""Modes as smdebug names them (smdebug.modes / smdebug.core.modes.ModeKeys), and the one place
that turns whatever a caller passes for a mode into the name the views use."""
import enum


class ModeKeys(enum.Enum):
    """smdebug's ModeKeys, with smdebug's values."""
    TRAIN = 1
    EVAL = 2
    PREDICT = 3
    GLOBAL = 4


modes = ModeKeys   # as in `from smdebug import modes`


def mode_name(mode):
    """'TRAIN', 'EVAL', 'PREDICT' or 'GLOBAL' for a ModeKeys (ours or smdebug's: anything with a
    .name), a string in any case, or None (GLOBAL: global step numbers, every mode)."""
    if mode is None:
        return "GLOBAL"
    name = getattr(mode, "name", mode)
    if not isinstance(name, str) or name.upper() not in ModeKeys.__members__:
        raise ValueError("not a mode: %r (TRAIN, EVAL, PREDICT or GLOBAL)" % (mode,))
    return name.upper()

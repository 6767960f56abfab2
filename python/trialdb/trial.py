"""A trial of a trialdb database with smdebug's Trial API (tensor_names, steps, modes, workers,
collections, tensor(name) -> Tensor, ...), plus SQL: sql() and frame() return pandas DataFrames,
plot() the PNG of a `trialdb plot` chart, and a notebook shows a trial as a table (display.py).

    t = trialdb.Trial("trials.db", "pt_bad_init")
    t.tensor_names(collection="gradients", mode=trialdb.modes.TRAIN)
    t.tensor("CrossEntropyLoss_output_0").values(mode=trialdb.modes.EVAL)    # {mode step: array}
    t.frame("reductions", tensor=re.compile("^gradient/"), step=range(0, 10), reduction=["l2", "mean"])
"""
import collections
import re

from . import display
from .connection import open as open_database
from .exceptions import StepUnavailable, TensorUnavailable
from .frame import frame_query
from .modes import ModeKeys, mode_name
from .tensor import Tensor

Collection = collections.namedtuple("Collection", "name include_regex tensor_names save_config reduction_config")


class Trial:
    """One trial of a trialdb database (the only one when the database holds one)."""

    def __init__(self, path, trial=None, extension=None):
        self.path = path
        self.con = open_database(path, extension)
        names = [r[0] for r in self.con.execute("SELECT trial FROM trials ORDER BY trial")]
        if trial is None and len(names) == 1:
            trial = names[0]
        if trial not in names:
            raise KeyError("no trial %r in %s (trials: %s)" % (trial, path, ", ".join(names) or "none"))
        self.name = trial

    def __repr__(self):
        return "<trialdb.Trial %r of %s>" % (self.name, self.path)

    def _rows(self, sql, *params):
        return self.con.execute(sql, (self.name,) + params).fetchall()

    def _column(self, sql, *params):
        return [r[0] for r in self._rows(sql, *params)]

    # --- smdebug's Trial API ---------------------------------------------------------------------

    def tensor_names(self, *, step=None, mode=ModeKeys.GLOBAL, regex=None, collection=None):
        """Sorted tensor names: every tensor, those saved in a mode, or at a step of it; narrowed
        to names a regex (or any of a list of them) finds (Python re.search) and to a collection."""
        name = mode_name(mode)
        if step is None and name == "GLOBAL":
            names = self._column("SELECT tensor FROM tensors WHERE trial = ?")
        elif step is None:
            names = self._column("SELECT DISTINCT tensor FROM tensor_values WHERE trial = ? AND mode = ?", name)
        elif name == "GLOBAL":
            names = self._column("SELECT DISTINCT tensor FROM tensor_values WHERE trial = ? AND step = ?", step)
        else:
            names = self._column("SELECT DISTINCT tensor FROM tensor_values WHERE trial = ? AND mode = ? AND mode_step = ?",
                                 name, step)
        selected = set(names)
        if regex is not None:
            patterns = [regex] if isinstance(regex, str) else list(regex)
            selected = {n for n in selected if any(re.search(p, n) for p in patterns)}
        if collection is not None:
            members = self._column("SELECT tensor FROM collections WHERE trial = ? AND collection = ?",
                                   getattr(collection, "name", collection))
            selected &= set(members)
        return sorted(selected)

    def tensor(self, name):
        if not self.has_tensor(name):
            raise TensorUnavailable(name)
        return Tensor(self, name)

    def has_tensor(self, name):
        return bool(self._rows("SELECT 1 FROM tensors WHERE trial = ? AND tensor = ?", name))

    def steps(self, mode=ModeKeys.GLOBAL, show_incomplete_steps=False):
        """Complete global steps, or a mode's complete mode steps."""
        complete = "" if show_incomplete_steps else " AND complete"
        name = mode_name(mode)
        if name == "GLOBAL":
            return self._column("SELECT step FROM steps WHERE trial = ?" + complete + " ORDER BY step")
        return self._column("SELECT mode_step FROM steps WHERE trial = ? AND mode = ?" + complete + " ORDER BY mode_step",
                            name)

    def modes(self):
        """The modes the trial saved steps in, as ModeKeys; as smdebug, GLOBAL is not one of them
        (its steps are numbered by the global step)."""
        return sorted((ModeKeys[m] for m in self._column("SELECT DISTINCT mode FROM steps WHERE trial = ? "
                                                         "AND mode <> 'GLOBAL'")), key=lambda m: m.value)

    def _global_row(self, global_step):
        rows = self._rows("SELECT mode, mode_step FROM steps WHERE trial = ? AND step = ?", global_step)
        if not rows:
            raise StepUnavailable(global_step, ModeKeys.GLOBAL)
        return rows[0]

    def mode(self, global_step):
        return ModeKeys[self._global_row(global_step)[0]]

    def mode_step(self, global_step):
        return self._global_row(global_step)[1]

    def global_step(self, mode, mode_step):
        name = mode_name(mode)
        if name == "GLOBAL":
            return mode_step
        rows = self._column("SELECT step FROM steps WHERE trial = ? AND mode = ? AND mode_step = ?", name, mode_step)
        if not rows:
            raise StepUnavailable(mode_step, mode)
        return rows[0]

    def workers(self):
        return self._column("SELECT worker FROM workers WHERE trial = ? ORDER BY worker")

    def ended(self):
        """Whether training has ended (the job wrote its end marker)."""
        return bool(self._column("SELECT ended FROM trials WHERE trial = ?")[0])

    def collections(self):
        """{name: Collection} as the hook defined them, with their tensors resolved at ingest."""
        members = collections.defaultdict(set)
        for c, t in self._rows("SELECT collection, tensor FROM collections WHERE trial = ?"):
            members[c].add(t)
        out = {}
        for name, include, save, reduction in self._rows(
                "SELECT collection, include_regex, save_config, reduction_config FROM collection_definitions "
                "WHERE trial = ? ORDER BY collection"):
            out[name] = Collection(name, [r for r in (include or "").split(",") if r], members.get(name, set()),
                                   save, reduction)
        for name in members.keys() - out.keys():
            out[name] = Collection(name, [], members[name], None, None)
        return out

    def collection(self, name):
        found = self.collections()
        if name not in found:
            raise KeyError("trial %s has no collection %r (collections: %s)" % (self.name, name, ", ".join(sorted(found))))
        return found[name]

    # --- shortcuts of the Tensor API, as trialdb.Trial had them ----------------------------------

    def value(self, tensor, step, mode=ModeKeys.GLOBAL, worker=None):
        return self.tensor(tensor).value(step, mode=mode, worker=worker)

    def reduction_value(self, tensor, step, reduction, abs=False, mode=ModeKeys.GLOBAL, worker=None):
        return self.tensor(tensor).reduction_value(step, reduction, mode=mode, worker=worker, abs=abs)

    # --- SQL ------------------------------------------------------------------------------------

    def sql(self, query, params=()):
        """A query's result as a pandas DataFrame (read-only; the tensor_* functions are there)."""
        import pandas as pd
        return pd.read_sql_query(query, self.con, params=params)

    def frame(self, view, **filters):
        """A public view of this trial as a DataFrame. Each filter is column=...: a value (equal),
        None (NULL), a list, tuple or set (IN), a range or slice (start <= column < stop), or a
        compiled regex (Python re.search)."""
        import pandas as pd
        sql, params = frame_query(self.con, view, self.name, filters)
        return pd.read_sql_query(sql, self.con, params=params)

    # --- notebooks ------------------------------------------------------------------------------

    def _repr_html_(self):
        return display.trial_html(self)

    def plot(self, kind, **options):
        """The PNG of `trialdb plot KIND --trial NAME ...` (IPython displays it); options are the
        command's, with underscores for dashes: t.plot("reduction", tensor="loss", smooth=0.6)."""
        return display.plot(self, kind, options)

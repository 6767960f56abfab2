"""trialdb from Python: a trialdb database as smdebug's Trial API, with numpy and pandas.

Only the standard library is needed to import it; numpy is needed for values, pandas for frames
(each imported when first used). Values are decoded exactly as docs/BLOB_FORMAT.md describes,
strings and bfloat16 included, so no extension is needed to read them; open() loads the trialdb
extension when it is found, for the tensor_* SQL functions.

    import trialdb
    t = trialdb.Trial("trials.db", "pt_bad_init")
    t.tensor_names(collection="gradients")
    t.steps(mode="TRAIN")
    t.value("Net_fc.weight", step=5)                 # numpy array
    t.reduction_value("gradient/Net_fc.weight", 5, "mean", abs=True)
    t.frame("reductions", reduction="l2")            # pandas DataFrame of a view, filtered
"""
import os
import sqlite3
import struct
import urllib.parse
import zlib

__all__ = ["open", "decode", "Trial"]

_MAGIC = 0xB1
_COMPRESSED = 1
_BYTES_NOT_STORED = 2   # flags: the header alone (ingest --values none)
_BFLOAT16 = 10
_STRING = 15
# numpy dtypes by blob dtype code; bfloat16 (10) and string (15) are decoded apart.
_NUMPY = ["?", "i1", "u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", None, "<f4", "<f8", "<c8", "<c16"]


def _extension_path():
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.environ.get("TRIALDB_EXTENSION"), os.path.join(here, "..", "build", "lib", "trialdb")):
        if candidate and (os.path.exists(candidate) or os.path.exists(candidate + ".so")):
            return candidate
    return None


def open(path, extension=None, read_only=True):
    """A connection to the database at path, read-only unless asked, with the trialdb extension
    loaded when found (extension=, $TRIALDB_EXTENSION, or build/lib/trialdb beside this file)."""
    if not os.path.exists(path):
        raise FileNotFoundError("no trialdb database at %s" % path)
    # A file: URI: the path percent-encoded, so that '#', '?' and '%' in a file name are part of
    # the name and not a fragment, a query or an escape (runs#1.db is not runs).
    uri = "file:%s%s" % (urllib.parse.quote(os.path.abspath(path)), "?mode=ro" if read_only else "")
    con = sqlite3.connect(uri, uri=True)
    ext = extension or _extension_path()
    if ext and hasattr(con, "enable_load_extension"):
        con.enable_load_extension(True)
        con.load_extension(ext)
        con.enable_load_extension(False)
    return con


def decode(blob):
    """A value blob (tensor_values.value) as a numpy array; strings as an array of str."""
    import numpy as np
    if blob is None:
        return None
    b = bytes(blob)
    if len(b) < 4 or b[0] != _MAGIC:
        raise ValueError("not a trialdb value blob")
    code, ndim, flags = b[1], b[2], b[3]
    if flags == _BYTES_NOT_STORED:
        raise ValueError("this value's bytes were not stored: its trial was ingested with --values none; add them "
                         "with 'trialdb ingest PATH --db FILE --values all', which reads only the missing values")
    dims = struct.unpack_from("<%dq" % ndim, b, 4)
    data = b[4 + 8 * ndim:]
    if flags & _COMPRESSED:
        data = zlib.decompress(data[8:])
    if code == _STRING:
        out, at = [], 0
        for _ in range(int(np.prod(dims, dtype=np.int64)) if ndim else 1):
            (n,) = struct.unpack_from("<I", data, at)
            out.append(data[at + 4:at + 4 + n].decode("utf-8", "replace"))
            at += 4 + n
        return np.array(out, dtype=object).reshape(dims)
    if code == _BFLOAT16:   # the top half of a float32
        halves = np.frombuffer(data, dtype="<u2").astype(np.uint32) << 16
        return halves.view(np.float32).reshape(dims)
    return np.frombuffer(data, dtype=_NUMPY[code]).reshape(dims)


class Trial:
    """One trial of a trialdb database, with the names of smdebug's Trial API."""

    def __init__(self, path, trial=None, extension=None):
        self.con = open(path, extension)
        names = [r[0] for r in self.con.execute("SELECT trial FROM trials ORDER BY trial")]
        if trial is None and len(names) == 1:
            trial = names[0]
        if trial not in names:
            raise KeyError("no trial %r in %s (trials: %s)" % (trial, path, ", ".join(names) or "none"))
        self.name = trial

    def _rows(self, sql, *params):
        return self.con.execute(sql, (self.name,) + params).fetchall()

    def tensor_names(self, collection=None, regex=None):
        """The tensors (smdebug's tensor_names()), of a collection or matching a Python regex."""
        import re
        if collection is not None:
            names = [r[0] for r in self._rows("SELECT tensor FROM collections WHERE trial = ? AND collection = ? "
                                              "ORDER BY tensor", collection)]
        else:
            names = [r[0] for r in self._rows("SELECT tensor FROM tensors WHERE trial = ? ORDER BY tensor")]
        return [n for n in names if regex is None or re.search(regex, n)]

    def steps(self, mode=None):
        """The complete global steps, of one mode if given."""
        if mode is None:
            return [r[0] for r in self._rows("SELECT step FROM steps WHERE trial = ? AND complete ORDER BY step")]
        return [r[0] for r in self._rows("SELECT step FROM steps WHERE trial = ? AND complete AND mode = ? "
                                         "ORDER BY step", mode.upper())]

    def workers(self):
        return [r[0] for r in self._rows("SELECT worker FROM workers WHERE trial = ? ORDER BY worker")]

    def _worker(self, worker):
        if worker is not None:
            return worker
        workers = self.workers()
        return "worker_0" if "worker_0" in workers else (workers[0] if workers else None)

    def value(self, tensor, step, worker=None):
        """The value of tensor at a global step as a numpy array (None when only reductions were saved)."""
        rows = self._rows("SELECT value FROM tensor_values WHERE trial = ? AND tensor = ? AND global_step = ? "
                          "AND worker = ?", tensor, step, self._worker(worker))
        if not rows:
            raise KeyError("%s has no value of %r at step %d" % (self.name, tensor, step))
        return decode(rows[0][0])

    def reduction_value(self, tensor, step, reduction, abs=False, worker=None):
        """A reduction (min, max, mean, prod, std, variance, sum, l1, l2; of |x| with abs) at a global step."""
        rows = self._rows("SELECT value FROM reductions WHERE trial = ? AND tensor = ? AND global_step = ? "
                          "AND reduction = ? AND abs = ? AND worker = ?", tensor, step, reduction, int(bool(abs)),
                          self._worker(worker))
        if not rows:
            raise KeyError("%s has no %s%s of %r at step %d" % (self.name, "abs " if abs else "", reduction, tensor, step))
        return float("nan") if rows[0][0] is None else rows[0][0]

    def frame(self, view, **where):
        """A public view of this trial as a pandas DataFrame, filtered by column=value pairs."""
        import pandas as pd
        if not view.isidentifier():
            raise ValueError("not a view name: %r" % view)
        columns = [r[1] for r in self.con.execute("SELECT * FROM pragma_table_info(?)", (view,))]
        for c in where:
            if c not in columns:
                raise KeyError("view %s has no column %r (columns: %s)" % (view, c, ", ".join(columns)))
        sql = "SELECT * FROM %s WHERE trial = ?" % view + "".join(" AND %s = ?" % c for c in where)
        return pd.read_sql_query(sql, self.con, params=(self.name, *where.values()))

"""The SQL of Trial.frame(): a public view of one trial, filtered column by column."""
import functools
import re

# The name of the Python function frame() registers on its connection for regex filters.
_REGEX_FUNCTION = "trialdb_python_re_search"


@functools.lru_cache(maxsize=256)
def _compiled(pattern, flags):
    return re.compile(pattern, flags)


def _re_search(pattern, flags, text):
    return text is not None and _compiled(pattern, flags).search(text) is not None


def _condition(column, wanted, params):
    quoted = '"%s"' % column
    if wanted is None:
        return quoted + " IS NULL"
    if isinstance(wanted, re.Pattern):
        params += [wanted.pattern, wanted.flags]
        return "%s(?, ?, %s)" % (_REGEX_FUNCTION, quoted)
    if isinstance(wanted, range) and wanted.step == 1 or isinstance(wanted, slice):
        if isinstance(wanted, slice) and wanted.step not in (None, 1):
            raise ValueError("a slice filter of %s must not have a step" % column)
        parts = []
        if wanted.start is not None:
            parts.append(quoted + " >= ?")
            params.append(wanted.start)
        if wanted.stop is not None:
            parts.append(quoted + " < ?")
            params.append(wanted.stop)
        return " AND ".join(parts) or "1"
    if isinstance(wanted, (list, tuple, set, frozenset, range)):
        items = list(wanted)
        params += items
        return "%s IN (%s)" % (quoted, ", ".join("?" * len(items))) if items else "0"
    params.append(wanted)
    return quoted + " = ?"


def frame_query(con, view, trial, filters):
    """(sql, params) selecting the view's rows of the trial that pass every filter."""
    columns = [r[1] for r in con.execute("SELECT * FROM pragma_table_info(?)", (view,))]
    if not columns or not view.isidentifier():
        raise ValueError("not a view of this database: %r" % view)
    for c in filters:
        if c not in columns:
            raise KeyError("view %s has no column %r (columns: %s)" % (view, c, ", ".join(columns)))
    if any(isinstance(w, re.Pattern) for w in filters.values()):
        con.create_function(_REGEX_FUNCTION, 3, _re_search, deterministic=True)
    params = [trial]
    where = "".join(" AND (%s)" % _condition(c, w, params) for c, w in filters.items())
    return "SELECT * FROM %s WHERE trial = ?%s" % (view, where), params

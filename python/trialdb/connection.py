"""A connection to a trialdb database: read-only unless asked, the file named exactly (its path
escaped into SQLite's file: URI, so `runs#1.db` or `run%73` is that file and no other), and the
trialdb extension loaded when found, for the tensor_* SQL functions."""
import os
import pathlib
import sqlite3

# What the CLI and the extension are found as, beside this package in a build tree.
_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.normpath(os.path.join(_HERE, "..", ".."))


def extension_path():
    for candidate in (os.environ.get("TRIALDB_EXTENSION"), os.path.join(_REPO, "build", "lib", "trialdb")):
        if candidate and (os.path.exists(candidate) or os.path.exists(candidate + ".so")):
            return candidate
    return None


def cli_path():
    """The trialdb command: $TRIALDB, the build tree's, or the one on PATH."""
    import shutil
    for candidate in (os.environ.get("TRIALDB"), os.path.join(_REPO, "build", "bin", "trialdb")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("trialdb")
    if found:
        return found
    raise FileNotFoundError("the trialdb command was not found: set $TRIALDB or put it on PATH")


def database_uri(path, read_only=True):
    """SQLite's URI for exactly this file: pathlib quotes '#', '?' and '%' in it."""
    uri = pathlib.Path(os.path.abspath(path)).as_uri()
    return uri + ("?mode=ro" if read_only else "")


def open(path, extension=None, read_only=True):
    """A connection to the database at path, read-only unless asked, with the trialdb extension
    loaded when found (extension=, $TRIALDB_EXTENSION, or build/lib/trialdb of this checkout)."""
    if not os.path.isfile(path):
        raise FileNotFoundError("no trialdb database at %s" % path)
    con = sqlite3.connect(database_uri(path, read_only), uri=True)
    ext = extension or extension_path()
    if ext and hasattr(con, "enable_load_extension"):
        con.enable_load_extension(True)
        con.load_extension(ext)
        con.enable_load_extension(False)
    return con

#!/usr/bin/python3
"""The libraries a command loads: the quick commands do not load the heavy libraries of the parts
they never use (bench/README.md, "Process start-up": each costs milliseconds of every run).

usage: startup_libraries_check.py TRIALDB FIXTURES_DIR WORK_DIR
Runs each command with LD_DEBUG=files, in which the dynamic loader names every library it opens,
linked or dlopen'ed, and checks that none of the heavy ones is among them (and that libsqlite3,
which every command links, is: the listing works). Then a copy of the executable without the
serve module beside it: `serve` fails, naming the module and what needs it.
"""
import os
import re
import shutil
import subprocess
import sys

TRIALDB, FIXTURES, WORK = sys.argv[1:4]
# Library file name prefix -> the only part that may load it.
HEAVY = {
    "libcurl": "S3 (s3/curl_api.h)",
    "libcairo": "charts (src/plot/cairo_api.h)",
    "libcpp-httplib": "serve (src/serve/server.h)",
    "trialdb_serve": "serve (src/serve/server.h)",
}
ALWAYS_LOADED = "libsqlite3"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def loaded_libraries(*args):
    env = dict(os.environ, LD_DEBUG="files")
    p = subprocess.run([TRIALDB, *args], capture_output=True, text=True, timeout=300, env=env)
    check(p.returncode == 0, "%s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr[-2000:]))
    return set(re.findall(r"\bfile=(\S+)", p.stderr))


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
db = os.path.join(WORK, "t.db")
commands = [
    ["--version"],
    ["ingest", os.path.join(FIXTURES, "pt_bad_init"), "--db", db],
    ["info", "--db", db],
    ["sql", "--db", db, "SELECT count(*) FROM tensor_values"],
    ["rules", "--db", db],
]
for args in commands:
    names = loaded_libraries(*args)
    check(any(n.startswith(ALWAYS_LOADED) for n in names), "%s: LD_DEBUG lists no %s: %s" % (args[0], ALWAYS_LOADED, names))
    for prefix, part in HEAVY.items():
        loaded = sorted(n for n in names if os.path.basename(n).startswith(prefix))
        check(not loaded, "%s loads %s, which only %s needs" % (args[0], loaded, part))

# A copy of the executable alone: no ../lib/trialdb_serve.so beside it.
lonely = os.path.join(WORK, "copy", "bin", "trialdb")
os.makedirs(os.path.dirname(lonely))
shutil.copy2(TRIALDB, lonely)
p = subprocess.run([lonely, "serve", "--db", db, "--port", "0"], capture_output=True, text=True, timeout=60)
module = os.path.join(WORK, "copy", "lib", "trialdb_serve.so")
check(p.returncode == 1, "serve without its module: exit %d, not 1" % p.returncode)
check("cannot load %s, which trialdb serve needs: " % module in p.stderr and "No such file" in p.stderr,
      "serve without its module says: %r" % p.stderr)
check(p.stdout == "", "serve without its module printed %r" % p.stdout)

if failures:
    sys.exit("%d failure(s)" % len(failures))
print("ok: %d commands load none of %s; serve without its module says so" % (len(commands), ", ".join(HEAVY)))

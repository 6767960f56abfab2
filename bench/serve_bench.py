#!/usr/bin/python3
"""serve_bench: how fast `trialdb serve` answers and the page draws (issue 30's targets).

A synthetic trial of scalar tensors (40 of them charted) and BENCH_SERVE_STEPS (10,000)
TRAIN steps is ingested; then:
  - the JSON of the 40-line chart (/api/scalars, 2,000 points a line as the page asks for a
    1,000-pixel chart), timed from the request to the last byte: target <= 100 ms; the first
    request, which reads the lines from the database, is shown apart (the server keeps the lines
    it read, src/serve/line_cache.h): it is the median of the first requests of ROUNDS servers,
    each started for it (the database file in the page cache, as after the ingest); the server's
    CPU time of each is given too, and for the first request that of the thread serving it;
  - in headless Chromium (selenium), the page's first contentful paint and its first chart
    (performance API: the 'first-contentful-paint' entry and the page's own
    'trialdb-scalars-drawn' mark, from navigation start): target <= 1 s;
  - the 40-line chart: from typing the regex that chooses the 40 tensors to the chart drawn,
    measured in the page with performance.now(): target <= 1 s.
Each is the median of BENCH_SERVE_ROUNDS (7) rounds. Prints RESULT rows as bench/run's other
scripts do (bench/README.md).

usage: serve_bench.py [TRIALDB]   (default: $BENCH_BIN/trialdb; data in $BENCH_DATA)
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

STEPS = int(os.environ.get("BENCH_SERVE_STEPS", "10000"))
ROUNDS = int(os.environ.get("BENCH_SERVE_ROUNDS", "7"))
LINES = 40
JSON_TARGET_MS = 100
PAGE_TARGET_MS = 1000


def main():
    trialdb = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.environ.get("BENCH_BIN", "build-release/bin"), "trialdb")
    work = tempfile.mkdtemp(prefix="serve_bench_", dir=os.environ.get("BENCH_DATA"))
    try:
        trial, db = os.path.join(work, "trial"), os.path.join(work, "serve.db")
        subprocess.run([trialdb, "synth", trial, "--steps", str(STEPS), "--tensors", str(LINES), "--elements", "1",
                        "--eval-every", "0"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([trialdb, "ingest", trial, "--db", db, "--name", "bench"], check=True, stdout=subprocess.DEVNULL)
        first = [first_request(trialdb, db) for _ in range(ROUNDS)]
        server = subprocess.Popen([trialdb, "serve", "--db", db, "--port", "0"], stdout=subprocess.PIPE, text=True)
        try:
            url = server.stdout.readline().split()[2]
            measure(url, server.pid, first)
        finally:
            server.terminate()
            server.wait()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def server_cpu_ms(pid):
    """The server's user + system CPU time so far: on a loaded machine the wall time of a request
    is mostly waiting for a core."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def chart_query(url):
    """The regex of the first 40 tensors, by name (synth adds gradients to the tensors asked for),
    and the chart's /api/scalars URL."""
    with urllib.request.urlopen(url + "api/tensors") as r:
        names = [t["tensor"] for t in json.load(r)["tensors"]][:LINES]
    regex = "^(" + "|".join(re.escape(n) for n in names) + ")$"
    return regex, url + "api/scalars?" + urllib.parse.urlencode({"tensor": regex, "mode": "TRAIN", "points": 2000})


def thread_cpu_ms(pid):
    """Each live thread's CPU time so far (ns precise, /proc/PID/task/*/schedstat)."""
    out = {}
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, task)) as f:
                out[task] = int(f.read().split()[0]) / 1e6
        except OSError:
            pass  # ended meanwhile
    return out


def first_request(trialdb, db):
    """(wall ms, server CPU ms, CPU ms of the thread that served it) of the chart's first request to
    a server started for it. The serving thread's time is the request's critical path when the
    server's other thread (reading half the lines) ends first: its wall time on free cores."""
    server = subprocess.Popen([trialdb, "serve", "--db", db, "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        _, query = chart_query(server.stdout.readline().split()[2])
        started, cpu, threads = time.perf_counter(), server_cpu_ms(server.pid), thread_cpu_ms(server.pid)
        with urllib.request.urlopen(query) as r:
            body = r.read()
        ms, cpu = (time.perf_counter() - started) * 1000, server_cpu_ms(server.pid) - cpu
        serving = max(t - threads.get(task, 0) for task, t in thread_cpu_ms(server.pid).items())
        lines = body.count(b'"tensor"')
        assert lines == LINES, "the chart has %d lines, not %d" % (lines, LINES)
        return ms, cpu, serving
    finally:
        server.terminate()
        server.wait()


def measure(url, pid, first):
    regex, query = chart_query(url)
    with urllib.request.urlopen(query) as r:
        body = r.read()
    json_ms, cpu_before = [], server_cpu_ms(pid)
    for _ in range(ROUNDS):
        started = time.perf_counter()
        with urllib.request.urlopen(query) as r:
            r.read()
        json_ms.append((time.perf_counter() - started) * 1000)
    cpu_ms = (server_cpu_ms(pid) - cpu_before) / ROUNDS
    print("load average %.1f" % os.getloadavg()[0])
    report("JSON of a %d-line chart of %d steps, first request (every line read from the database)" % (LINES, STEPS),
           statistics.median(f[0] for f in first), JSON_TARGET_MS)
    report("JSON of the same chart, first request: the server's CPU time", statistics.median(f[1] for f in first),
           JSON_TARGET_MS)
    report("JSON of the same chart, first request: the CPU time of the thread serving it (its wall time on free cores)",
           statistics.median(f[2] for f in first), JSON_TARGET_MS)
    report("JSON of a %d-line chart of %d steps (%d KB), from the server, lines cached" % (LINES, STEPS, len(body) // 1024),
           statistics.median(json_ms), JSON_TARGET_MS)
    report("JSON of the same chart, lines cached: the server's CPU time", cpu_ms, JSON_TARGET_MS, "mean")

    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1100,760"):
        options.add_argument(arg)
    options.binary_location = "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        paint, first_chart, chart = [], [], []
        for _ in range(ROUNDS):
            driver.get(url)
            wait(lambda: driver.execute_script("return performance.getEntriesByName('trialdb-scalars-drawn').length"))
            paint.append(driver.execute_script(
                "return performance.getEntriesByName('first-contentful-paint')[0].startTime"))
            first_chart.append(driver.execute_script(
                "return performance.getEntriesByName('trialdb-scalars-drawn')[0].startTime"))
            chart.append(driver.execute_async_script("""
                const done = arguments[arguments.length - 1];
                const before = performance.getEntriesByName('trialdb-scalars-drawn').length;
                const started = performance.now();
                const t = document.getElementById('sc-tensor');
                document.getElementById('sc-collection').value = '';
                t.value = arguments[0];
                t.dispatchEvent(new Event('input'));
                const poll = () => {
                  const marks = performance.getEntriesByName('trialdb-scalars-drawn');
                  if (marks.length > before) done(marks[marks.length - 1].startTime - started);
                  else setTimeout(poll, 5);
                };
                poll();""", regex))
            shown = driver.execute_script("return document.querySelectorAll('#sc-chart .u-legend .u-series').length")
            assert shown == LINES + 1, "the page drew %d series" % (shown - 1)
        report("page: first contentful paint", statistics.median(paint), PAGE_TARGET_MS)
        report("page: first chart (the loss) drawn, from navigation", statistics.median(first_chart), PAGE_TARGET_MS)
        report("page: %d-line chart of %d steps, from choosing it to drawn (150 ms of it the input's debounce)"
               % (LINES, STEPS), statistics.median(chart), PAGE_TARGET_MS)
    finally:
        driver.quit()


def wait(fn, timeout=30):
    until = time.monotonic() + timeout
    while not fn():
        if time.monotonic() > until:
            raise TimeoutError("the page drew no chart")
        time.sleep(0.01)


def report(what, ms, target, how="median"):
    print("RESULT %s, %s|%.0f ms|target %d ms|%.2f|<= 1.00|%s" % (
        what, "%s of %d" % (how, ROUNDS), ms, target, ms / target, "yes" if ms <= target else "NO"))


if __name__ == "__main__":
    main()

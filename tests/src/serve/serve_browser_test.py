#!/usr/bin/python3
"""`trialdb serve` in a real browser: headless Chromium (Debian's chromium and chromium-driver)
driven by python3-selenium, against the binary serving the fixtures.

Checks: the page opens on the trials' loss curves (trial list, a chart whose screenshot is not
blank); smoothing and a dragged step range change what is drawn; the hover readout gives the
exact stored value, and /api/scalars the view's values; every view draws (distributions, findings and their link to the tensor's
chart, the SQL box's table and chart); the distributions' heat map draws, follows a dragged step
range, and its counts are those of the histogram_buckets view; a hostile trial and tensor name show as text and run
nothing; a trial ingested with --follow while the page is open appears, and its steps as they
are written, without a reload; a database locked by a writer is said so and caught up with;
writes sent to every endpoint (other methods, SQL that writes, ATTACH, PRAGMA, load_extension)
are refused and leave the database's bytes unchanged; the security headers, the Host check and
the bearer token. Screenshots of each view are compared with those docs/SERVE.md shows (their
size, as the cookbook's charts are).

usage: serve_browser_test.py TRIALDB FIXTURES_DIR DOCS_DIR WORK_DIR [--update]
--update writes the screenshots into DOCS_DIR/img (then review them).
"""
import hashlib
import json
import math
import os
import re
import shutil
import sqlite3
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "hostile", "output"))
from names_json_test import rename  # noqa: E402  (renames a tensor in a trial's index and records)

TRIALDB, FIXTURES, DOCS, WORK = sys.argv[1:5]
UPDATE = "--update" in sys.argv[5:]
HOSTILE_TRIAL = '<img src=x onerror="window.__pwned=1">'
HOSTILE_TENSOR = '<img src=x onerror="window.__pwned=2">loss'
WINDOW = (1100, 760)
VIEWS = ("scalars", "distributions", "findings", "sql")


def run(*args, **kw):
    return subprocess.run([TRIALDB, *args], check=True, capture_output=True, text=True, **kw)


def wait_for(what, fn, timeout=10.0):
    until = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        if time.monotonic() > until:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.05)


def png_pixels(data):
    """(width, height, rows of bytes, bytes per pixel) of an 8-bit RGB or RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), (depth, color)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, bpp = zlib.decompress(idat), 3 if color == 2 else 4
    stride, rows, prev, i = width * bpp, [], bytearray(width * bpp), 0
    for _ in range(height):
        kind, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + ((a + b) >> 1)) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows, bpp


def drawn_share(png):
    """The share of pixels of another colour than the most common one (the background)."""
    width, height, rows, bpp = png_pixels(png)
    counts = {}
    for row in rows:
        for x in range(0, len(row), bpp):
            px = row[x:x + 3]
            counts[px] = counts.get(px, 0) + 1
    return 1 - max(counts.values()) / (width * height), len(counts)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    return struct.unpack(">II", head[16:24]) if head[:8] == b"\x89PNG\r\n\x1a\n" else None


class Server:
    def __init__(self, dbs, *extra):
        args = [TRIALDB, "serve", "--port", "0", *extra]
        for db in dbs:
            args += ["--db", db]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("trialdb serve: http://"), (line, self.proc.stderr.read() if self.proc.poll() else "")
        self.url = line.split()[2]
        parsed = urllib.parse.urlsplit(self.url)
        self.base = "%s://%s" % (parsed.scheme, parsed.netloc)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def http(method, url, headers=None):
    """(status, headers, body) of a request, whatever the status."""
    req = urllib.request.Request(url, method=method, headers=headers or {},
                                 data=b"{}" if method in ("POST", "PUT", "PATCH") else None)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def file_bytes(db):
    return {s: hashlib.sha256(open(db + s, "rb").read()).hexdigest() for s in ("", "-wal") if os.path.exists(db + s)}


def build_databases():
    os.makedirs(WORK, exist_ok=True)
    db = os.path.join(WORK, "serve.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    for trial in ("pt_bad_init", "pt_good_init", "dist2"):
        run("ingest", os.path.join(FIXTURES, trial), "--db", db)
    run("rules", "--db", db)
    hostile = os.path.join(WORK, "hostile_trial")
    shutil.rmtree(hostile, ignore_errors=True)
    run("synth", hostile, "--steps", "6", "--tensors", "2", "--elements", "8")
    rename(hostile, "CrossEntropyLoss_output_0", HOSTILE_TENSOR, range(6))
    run("ingest", hostile, "--db", db, "--name", HOSTILE_TRIAL)
    return db


class Page:
    def __init__(self):
        options = webdriver.ChromeOptions()
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--window-size=%d,%d" % WINDOW, "--force-device-scale-factor=1", "--hide-scrollbars"):
            options.add_argument(arg)
        options.binary_location = "/usr/bin/chromium"
        self.d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        self.d.set_window_size(*WINDOW)

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def draws(self):
        return self.js("return performance.getEntriesByName('trialdb-scalars-drawn').length")

    def heatmaps(self):
        return self.js("return performance.getEntriesByName('trialdb-heatmap-drawn').length")

    def after_redraw(self, action):
        before = self.draws()
        action()
        wait_for("the scalars chart to be drawn again", lambda: self.draws() > before)

    def chart_png(self, element_id):
        return self.d.find_element(By.ID, element_id).screenshot_as_png

    def text(self, element_id):
        return self.d.find_element(By.ID, element_id).text

    def tab(self, view):
        self.d.find_element(By.CSS_SELECTOR, "#tabs button[data-view=%s]" % view).click()


def check_opens_on_loss_curves(page, server):
    page.d.get(server.url)
    names = wait_for("the trial list", lambda: [e.text for e in page.d.find_elements(By.CSS_SELECTOR, "#trial-list .name")])
    for trial in ("pt_bad_init", "pt_good_init", "dist2", HOSTILE_TRIAL):
        assert trial in names, (trial, names)
    wait_for("the first chart", lambda: page.draws() > 0)
    assert page.d.find_elements(By.CSS_SELECTOR, "#sc-chart canvas"), "no canvas in the scalars chart"
    legend = page.text("sc-chart")
    assert "CrossEntropyLoss_output_0" in legend, legend
    share, colours = drawn_share(page.chart_png("sc-chart"))
    assert share > 0.01 and colours > 4, ("the chart looks blank", share, colours)


def check_smoothing_and_range_change_the_drawing(page):
    before = page.chart_png("sc-chart")
    page.after_redraw(lambda: page.js(
        "const s = document.getElementById('sc-smoothing'); s.value = '0.95'; s.dispatchEvent(new Event('input'))"))
    smoothed = page.chart_png("sc-chart")
    assert smoothed != before, "smoothing did not change the chart"
    over = page.d.find_element(By.CSS_SELECTOR, "#sc-chart .u-over")
    width = over.size["width"]
    page.after_redraw(lambda: ActionChains(page.d).move_to_element_with_offset(over, -width // 4, 0).click_and_hold()
                      .move_by_offset(width // 3, 0).release().perform())
    assert "steps " in page.text("sc-summary"), page.text("sc-summary")
    assert page.chart_png("sc-chart") != smoothed, "the step range did not change the chart"
    page.after_redraw(lambda: page.d.find_element(By.ID, "sc-reset").click())
    page.after_redraw(lambda: page.js(
        "const s = document.getElementById('sc-smoothing'); s.value = '0'; s.dispatchEvent(new Event('input'))"))
    assert "every step" in page.text("sc-summary")


def check_hover_is_exact(page, db):
    over = page.d.find_element(By.CSS_SELECTOR, "#sc-chart .u-over")
    ActionChains(page.d).move_to_element_with_offset(over, 30, 0).perform()
    rows = wait_for("the hover readout", lambda: page.d.find_elements(By.CSS_SELECTOR, "#sc-hover tr")[1:])
    cells = rows[0].find_elements(By.TAG_NAME, "td")
    label, step, shown = cells[0].text, int(cells[1].text.split()[1]), float(cells[2].text)
    trial, rest = label.split(" · ", 1) if " · " in label else ("", label)
    tensor, mode = rest.rsplit(" ", 1)
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    stored = con.execute("SELECT avg(value) FROM reductions WHERE tensor = ? AND step = ? AND mode = ? AND reduction = 'mean'"
                         " AND abs = 0" + (" AND trial = ?" if trial else ""),
                         (tensor, step, mode) + ((trial,) if trial else ())).fetchone()[0]
    assert shown == stored, (label, step, shown, stored)


def check_scalars_json_is_the_views(server, db):
    """/api/scalars at full resolution (its JSON written number by number) gives the reductions
    view's values, line by line (the loss curves; every tensor of a trial for other reductions,
    read on two threads, workers averaged), and /api/scalars/at the view's values at a step."""
    query = {"trial": ["pt_bad_init", "pt_good_init"], "collection": "losses", "points": 100000}
    status, _, body = http("GET", server.base + "/api/scalars?" + urllib.parse.urlencode(query, doseq=True))
    assert status == 200, (status, body)
    answer = json.loads(body)
    assert not answer["downsampled"] and len(answer["lines"]) >= 4, answer
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    for line in answer["lines"]:
        rows = con.execute("SELECT step, value FROM reductions WHERE trial = ? AND tensor = ? AND mode = ?"
                           " AND reduction = 'mean' AND abs = 0 ORDER BY step",
                           (line["trial"], line["tensor"], line["mode"])).fetchall()
        assert line["steps"] == [r[0] for r in rows] and line["values"] == [r[1] for r in rows], (line, rows)
    # Every tensor of each trial, for reductions no other check asks for (so their lines are read
    # now, two threads sharing them, not kept from before): each line is the view's rows of its
    # trial, tensor and mode, a step's workers averaged (dist2 has two), NULLs left out.
    def number(v):
        return float(v) if isinstance(v, str) else v

    for trial in ("pt_bad_init", "dist2"):
        for reduction, abs_ in (("max", 1), ("l2", 0), ("variance", 0)):
            query = {"trial": trial, "tensor": ".", "reduction": reduction, "abs": abs_, "points": 100000}
            status, _, body = http("GET", server.base + "/api/scalars?" + urllib.parse.urlencode(query))
            assert status == 200, (status, body)
            lines = json.loads(body)["lines"]
            expected = con.execute(
                "SELECT tensor, mode, count(DISTINCT step) FROM reductions WHERE trial = ? AND reduction = ?"
                " AND abs = ? AND value IS NOT NULL GROUP BY tensor, mode", (trial, reduction, abs_)).fetchall()
            assert sorted((l["tensor"], l["mode"], len(l["steps"])) for l in lines) == sorted(expected), (
                trial, reduction, [(l["tensor"], l["mode"], len(l["steps"])) for l in lines], expected)
            assert len({l["tensor"] for l in lines}) >= 4, (trial, reduction, lines)
            for line in lines:
                rows = con.execute("SELECT step, avg(value) FROM reductions WHERE trial = ? AND tensor = ?"
                                   " AND mode = ? AND reduction = ? AND abs = ? AND value IS NOT NULL"
                                   " GROUP BY step ORDER BY step",
                                   (trial, line["tensor"], line["mode"], reduction, abs_)).fetchall()
                assert line["steps"] == [r[0] for r in rows], (trial, reduction, line["tensor"], line["mode"])
                assert [number(v) for v in line["values"]] == [r[1] for r in rows], (
                    trial, reduction, line["tensor"], line["mode"], line["values"][:8], rows[:8])
    # The hover's values: at the last step at or before the one asked for, the workers' average
    # (dist2 has two), as SQL's avg() gives it.
    for trial, step in (("dist2", 10**9), ("dist2", 2), ("pt_bad_init", 9)):
        query = {"trial": trial, "tensor": ".", "step": step}
        status, _, body = http("GET", server.base + "/api/scalars/at?" + urllib.parse.urlencode(query))
        values = json.loads(body)["values"]
        assert status == 200 and len(values) > 2, (status, body)
        for v in values:
            last, avg = con.execute(
                "WITH last AS (SELECT max(step) AS step FROM reductions WHERE trial = ?1 AND tensor = ?2 AND mode = ?3"
                "  AND reduction = 'mean' AND abs = 0 AND step <= ?4 AND value IS NOT NULL)"
                "SELECT last.step, avg(value) FROM last JOIN reductions r ON r.step = last.step"
                " WHERE trial = ?1 AND tensor = ?2 AND mode = ?3 AND reduction = 'mean' AND abs = 0",
                (trial, v["tensor"], v["mode"], step)).fetchone()
            assert (v["step"], v["value"]) == (last, avg), (trial, step, v, last, avg)
    con.close()


def check_hostile_names_are_text(page):
    page.after_redraw(lambda: page.d.find_element(By.ID, "trials-all").click())
    page.js("const t = document.getElementById('sc-tensor'); t.value = 'onerror'; document.getElementById('sc-collection').value = ''")
    page.after_redraw(lambda: page.js("document.getElementById('sc-tensor').dispatchEvent(new Event('input'))"))
    assert HOSTILE_TENSOR in page.text("sc-chart"), page.text("sc-chart")
    assert HOSTILE_TRIAL in page.text("trial-list")
    assert page.js("return document.querySelectorAll('img').length") == 0
    assert page.js("return window.__pwned === undefined"), "a name ran as HTML"
    page.after_redraw(lambda: page.js(
        "const t = document.getElementById('sc-tensor'); t.value = ''; const c = document.getElementById('sc-collection');"
        "c.value = 'losses'; c.dispatchEvent(new Event('change'))"))


def check_views(page, server, shots):
    """Every view draws; a screenshot of each."""
    page.after_redraw(lambda: page.js(
        "const t = document.getElementById('sc-tensor'); t.value = ''; const c = document.getElementById('sc-collection');"
        "c.value = 'losses'; c.dispatchEvent(new Event('change'))"))
    shots["scalars"] = page.d.get_screenshot_as_png()
    page.tab("distributions")
    page.js("const t = document.getElementById('di-trial'); t.value = 'pt_bad_init'; t.dispatchEvent(new Event('change'))")
    wait_for("the percentile bands", lambda: page.d.find_elements(By.CSS_SELECTOR, "#di-chart canvas"))
    wait_for("a step's histogram", lambda: page.d.find_elements(By.CSS_SELECTOR, "#di-histogram canvas"))
    wait_for("the heat map", lambda: page.heatmaps() > 0)
    share, _ = drawn_share(page.chart_png("di-chart"))
    assert share > 0.01, "the percentile bands look blank"
    shots["distributions"] = page.d.get_screenshot_as_png()
    page.tab("findings")
    buttons = wait_for("the findings", lambda: page.d.find_elements(By.CSS_SELECTOR, "#fi-list button"))
    assert page.d.find_elements(By.CSS_SELECTOR, "#fi-chart canvas")
    shots["findings"] = page.d.get_screenshot_as_png()
    group = buttons[0].find_element(By.XPATH, "../..").find_element(By.TAG_NAME, "h3").text
    step = int(buttons[0].text.split()[1])
    page.after_redraw(buttons[0].click)
    tensor = group.split(" · ")[1]
    assert not page.d.find_element(By.ID, "view-scalars").get_attribute("hidden")
    assert tensor in page.d.find_element(By.ID, "sc-tensor").get_attribute("value").replace("\\", "")
    assert "steps %d to" % max(0, step - 50) in page.text("sc-summary"), page.text("sc-summary")
    page.tab("sql")
    page.d.find_element(By.ID, "sql-run").click()
    wait_for("the SQL result", lambda: len(page.d.find_elements(By.CSS_SELECTOR, "#sql-table tbody tr")) > 10)
    wait_for("the SQL chart", lambda: page.d.find_elements(By.CSS_SELECTOR, "#sql-chart canvas"))
    page.d.find_element(By.ID, "sql-copy").click()
    command = wait_for("the sqlite3 command", lambda: page.text("sql-command"))
    assert command.startswith("sqlite3 -readonly '") and "SELECT trial, tensor, step, value" in command, command
    shots["sql"] = page.d.get_screenshot_as_png()
    page.tab("scalars")


def expected_heatmap(db, trial, tensor, worker, first, last, bins, columns):
    """/api/heatmap's grid computed from the public views: the value range is the steps' smallest p0
    and largest p100 (distributions), each bucket of histogram_buckets counts in the bin of its
    middle, step i of n in column i * columns // n."""
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    con.enable_load_extension(True)   # histogram_buckets reads the stored histograms through it
    con.load_extension(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(TRIALDB))), "lib", "trialdb"))
    where = "trial = ? AND tensor = ? AND worker = ? AND step BETWEEN ? AND ?"
    args = (trial, tensor, worker, first, last)
    rows = con.execute("SELECT step, p0, p100, count - nan - pos_inf - neg_inf FROM distributions WHERE %s ORDER BY step"
                       % where, args).fetchall()
    steps = [r[0] for r in rows]
    lo, hi = min(r[1] for r in rows if r[1] is not None), max(r[2] for r in rows if r[2] is not None)
    cols = min(columns, len(steps))
    counts, finite = [[0] * bins for _ in range(cols)], [0] * cols
    for i, row in enumerate(rows):
        finite[i * cols // len(steps)] += row[3]
    for step, b_lo, b_hi, n in con.execute("SELECT step, lo, hi, count FROM histogram_buckets WHERE " + where, args):
        column = steps.index(step) * cols // len(steps)
        counts[column][min(bins - 1, max(0, math.floor(((b_lo + b_hi) / 2 - lo) / ((hi - lo) / bins))))] += n
    con.close()
    return {"lo": lo, "hi": hi, "first_steps": [steps[k * len(steps) // cols] for k in range(cols)],
            "last_steps": [steps[(k + 1) * len(steps) // cols - 1] for k in range(cols)], "counts": counts,
            "totals": finite}


def check_heatmap(page, server, db):
    """The distributions' heat map: drawn (not blank), redrawn for a dragged step range, and its
    numbers those of the database."""
    trial, tensor, worker = "pt_bad_init", "Net_conv0.weight", "worker_0"
    for first, last, bins, columns in ((0, 10**9, 48, 500), (3, 17, 16, 4), (5, 5, 7, 3)):
        query = {"trial": trial, "tensor": tensor, "worker": worker, "from": first, "to": last, "bins": bins,
                 "columns": columns}
        status, _, body = http("GET", server.base + "/api/heatmap?" + urllib.parse.urlencode(query))
        assert status == 200, (status, body)
        answer, expected = json.loads(body), expected_heatmap(db, trial, tensor, worker, first, last, bins, columns)
        assert answer["bins"] == bins and len(answer["counts"]) == len(expected["counts"]) > 0, answer
        for key, value in expected.items():
            if key == "counts":
                wrong = [k for k, column in enumerate(value) if answer[key][k] != column]
                assert not wrong, (query, "column %d" % wrong[0], answer[key][wrong[0]], value[wrong[0]])
            assert answer[key] == value, (query, key, answer[key], value)
        assert sum(map(sum, answer["counts"])) == sum(answer["totals"]) > 0
    page.tab("distributions")
    try:
        check_heatmap_drawing(page, trial, tensor)
    finally:
        page.after_redraw(lambda: page.tab("scalars"))


def check_heatmap_drawing(page, trial, tensor):
    page.js("const t = document.getElementById('di-trial'); t.value = arguments[0]; t.dispatchEvent(new Event('change'))",
            trial)
    wait_for("the heat map of %s" % tensor, lambda: page.d.find_elements(By.CSS_SELECTOR, "#di-heatmap canvas")
             and tensor in page.text("di-summary") and "every step" in page.text("di-summary"))
    whole = page.chart_png("di-heatmap")
    share, colours = drawn_share(whole)
    assert share > 0.05 and colours > 8, ("the heat map looks blank", share, colours)
    over = page.d.find_element(By.CSS_SELECTOR, "#di-chart .u-over")
    width = over.size["width"]
    before = page.heatmaps()
    ActionChains(page.d).move_to_element_with_offset(over, -width // 4, 0).click_and_hold() \
        .move_by_offset(width // 3, 0).release().perform()
    wait_for("the heat map of the step range", lambda: page.heatmaps() > before)
    assert "steps " in page.text("di-summary"), page.text("di-summary")
    assert page.chart_png("di-heatmap") != whole, "the step range did not change the heat map"
    before = page.heatmaps()
    page.d.find_element(By.ID, "di-reset").click()
    wait_for("the heat map of every step", lambda: page.heatmaps() > before)
    assert "every step" in page.text("di-summary"), page.text("di-summary")


def check_screenshots(shots):
    failures = 0
    for view in VIEWS:
        out = os.path.join(WORK, "serve_%s.png" % view)
        with open(out, "wb") as f:
            f.write(shots[view])
        doc_image = os.path.join(DOCS, "img", "serve_%s.png" % view)
        if UPDATE:
            shutil.copyfile(out, doc_image)
        shown = png_size(doc_image) if os.path.exists(doc_image) else None
        if png_size(out) != shown:
            print("FAIL screenshot %s: size %s, docs/SERVE.md shows %s" % (view, png_size(out), shown))
            failures += 1
        if "img/serve_%s.png" % view not in open(os.path.join(DOCS, "SERVE.md")).read():
            print("FAIL: docs/SERVE.md does not show img/serve_%s.png" % view)
            failures += 1
    assert failures == 0, "%d screenshots differ from the docs" % failures


def check_writes_change_nothing(server, db):
    before = file_bytes(db)
    paths = ["/", "/index.html", "/api/info", "/api/status", "/api/trials", "/api/tensors", "/api/scalars",
             "/api/scalars/at", "/api/distribution", "/api/histogram", "/api/heatmap", "/api/findings", "/api/sql"]
    for path in paths:
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            status, _, _ = http(method, server.base + path + "?q=DELETE%20FROM%20trial")
            assert status == 405, (method, path, status)
    writes = ["DELETE FROM trial", "DROP VIEW trials", "UPDATE trial SET name = 'x'", "INSERT INTO worker VALUES (1, 1, 'x')",
              "ATTACH '%s' AS other" % os.path.join(WORK, "other.db"), "VACUUM INTO '%s'" % os.path.join(WORK, "copy.db"),
              "PRAGMA query_only = 0", "PRAGMA journal_mode = DELETE", "PRAGMA user_version = 7",
              "SELECT load_extension('/nonexistent')", "CREATE TEMP TABLE t(x)", "BEGIN IMMEDIATE",
              "SELECT 1; DELETE FROM trial", "WITH x AS (SELECT 1) DELETE FROM trial", "REINDEX", "ANALYZE"]
    for sql in writes:
        status, _, body = http("GET", server.base + "/api/sql?" + urllib.parse.urlencode({"q": sql}))
        assert status == 400 and "error" in json.loads(body), (sql, status, body)
    for path in ("/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/js/../../etc/passwd", "/app.css/x", "/node_modules"):
        status, _, _ = http("GET", server.base + path)
        assert status in (400, 404), (path, status)
    assert not os.path.exists(os.path.join(WORK, "other.db")) and not os.path.exists(os.path.join(WORK, "copy.db"))
    assert file_bytes(db) == before, "the database's bytes changed"
    status, _, body = http("GET", server.base + "/api/sql?" + urllib.parse.urlencode({"q": "SELECT count(*) AS n FROM trials"}))
    assert status == 200 and json.loads(body)["rows"] == [[4]], body


def check_headers_host_and_token(server, db):
    for path in ("/", "/js/main.js", "/api/trials"):
        status, headers, _ = http("GET", server.base + path)
        assert status == 200, (path, status)
        csp = headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp, csp
        assert headers["X-Content-Type-Options"] == "nosniff"
    status, _, _ = http("GET", server.base + "/api/trials", {"Host": "attacker.example:80"})
    assert status == 403, status
    guarded = Server([db], "--token", "s3cret")
    try:
        assert guarded.url.endswith("#token=s3cret"), guarded.url
        assert http("GET", guarded.base + "/api/trials")[0] == 401
        assert http("GET", guarded.base + "/api/trials", {"Authorization": "Bearer wrong!"})[0] == 401
        assert http("GET", guarded.base + "/api/trials", {"Authorization": "Bearer s3cret"})[0] == 200
        assert http("GET", guarded.base + "/")[0] == 200   # the app's files hold no data
    finally:
        guarded.stop()


def check_live_follow(page, db):
    """A trial written step by step while `ingest --follow` reads it and the page is open."""
    page.js("window.__same_page = 'yes'")
    source = os.path.join(FIXTURES, "pt_good_init")
    live = os.path.join(WORK, "live_trial")
    shutil.rmtree(live, ignore_errors=True)
    os.makedirs(live)
    shutil.copytree(os.path.join(source, "collections"), os.path.join(live, "collections"))
    steps = sorted(os.listdir(os.path.join(source, "events")))
    base_points = int(re.search(r"(\d+) points", page.text("sc-summary")).group(1))
    follow = subprocess.Popen([TRIALDB, "ingest", live, "--db", db, "--name", "live_run", "--follow"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        seen = []
        for i, step in enumerate(steps):
            # A step's event files, then its index files, as smdebug writes them.
            files = [os.path.join("events", step, f) for f in os.listdir(os.path.join(source, "events", step))]
            for folder in os.listdir(os.path.join(source, "index")):
                files += [os.path.join("index", folder, f) for f in os.listdir(os.path.join(source, "index", folder))
                          if f.startswith(step + "_")]
            for rel in files:
                os.makedirs(os.path.dirname(os.path.join(live, rel)), exist_ok=True)
                shutil.copyfile(os.path.join(source, rel), os.path.join(live, rel))
            if i in (len(steps) // 3, 2 * len(steps) // 3):
                # From the moment the database shows the step to the moment the page does.
                wait_for("ingest --follow to commit step %s" % step, lambda: db_steps(db, "live_run") == i + 1, timeout=60)
                committed = time.monotonic()
                wait_for("the page to show step %s" % step, lambda: page_steps(page, "live_run") == i + 1, timeout=2.0)
                seen.append(time.monotonic() - committed)
                # The open chart too: live_run's loss lines (TRAIN and EVAL), a point per complete step.
                wait_for("the chart to show live_run's step %s" % step,
                         lambda: page.js("return [...document.querySelectorAll('#sc-chart .u-legend .u-label')]"
                                         ".some(e => e.textContent.startsWith('live_run'))") and
                         ("%d points" % (base_points + i + 1)) in page.text("sc-summary"), timeout=2.0)
        shutil.copyfile(os.path.join(source, "training_job_end.ts"), os.path.join(live, "training_job_end.ts"))
        assert follow.wait(timeout=60) == 0
        ended = time.monotonic()
        wait_for("live_run to show as ended", lambda: "ended" in (live_detail(page) or ""), timeout=2.0)
        print("live: new steps shown %.2f s and %.2f s after their commit, the end %.2f s after ingest --follow exited"
              % (seen[0], seen[1], time.monotonic() - ended))
    finally:
        if follow.poll() is None:
            follow.kill()
    assert page.js("return window.__same_page") == "yes", "the page was reloaded"


def db_steps(db, trial):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return con.execute("SELECT count(*) FROM steps WHERE trial = ? AND complete", (trial,)).fetchone()[0]
    finally:
        con.close()


def page_steps(page, trial):
    """The complete steps the trial list shows for the trial (the sum over its modes)."""
    return sum(int(n) for n in re.findall(r"(?:TRAIN|EVAL|PREDICT|GLOBAL) (\d+)", live_detail(page, trial) or ""))


def live_detail(page, trial="live_run"):
    """The trial list's line about the trial (read in one go: the list is redrawn as it changes)."""
    return page.js("""
        for (const li of document.querySelectorAll('#trial-list li')) {
          const name = li.querySelector('.name');
          if (name && name.textContent === arguments[0]) return li.querySelector('.detail').textContent;
        }
        return null;""", trial)


def check_locked_then_catches_up(page, db):
    """A writer holding the database's lock, as a one-shot ingest through a rollback journal
    does (bulk_load.h): the page says so, and catches up once the lock is gone. (In WAL mode, the
    mode a database is in while anyone has it open, readers never wait; the lock is seen on a file
    in rollback-journal mode, here a copy switched to it.)"""
    locked = os.path.join(WORK, "locked.db")
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(locked + suffix):
            os.remove(locked + suffix)
    source = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    source.execute("VACUUM INTO ?", (locked,))
    source.close()
    con = sqlite3.connect(locked, isolation_level=None)
    assert con.execute("PRAGMA journal_mode = DELETE").fetchone()[0] == "delete"
    con.close()
    server = Server([locked])
    try:
        page.d.get(server.url)
        wait_for("the first chart", lambda: page.draws() > 0)
        holder = sqlite3.connect(locked, isolation_level=None, timeout=10)
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("UPDATE trial SET ended = 1")
        try:
            wait_for("the locked banner", lambda: "holds its lock" in page.text("banner"), timeout=5)
        finally:
            holder.execute("COMMIT")
            holder.close()
        wait_for("the banner to go", lambda: not page.d.find_element(By.ID, "banner").is_displayed(), timeout=5)
    finally:
        server.stop()


def main():
    db = build_databases()
    server = Server([db])
    page = Page()
    shots, failures = {}, 0
    checks = [
        ("opens on the loss curves", lambda: check_opens_on_loss_curves(page, server)),
        ("smoothing and step range", lambda: check_smoothing_and_range_change_the_drawing(page)),
        ("hover values are exact", lambda: check_hover_is_exact(page, db)),
        ("scalars JSON and values at a step are the view's", lambda: check_scalars_json_is_the_views(server, db)),
        ("every view draws", lambda: check_views(page, server, shots)),
        ("screenshots as in docs/SERVE.md", lambda: check_screenshots(shots)),
        ("the distributions' heat map", lambda: check_heatmap(page, server, db)),
        ("hostile names are text", lambda: check_hostile_names_are_text(page)),
        ("writes change nothing", lambda: check_writes_change_nothing(server, db)),
        ("headers, Host and token", lambda: check_headers_host_and_token(server, db)),
        ("live: ingest --follow", lambda: check_live_follow(page, db)),
        ("live: a locked database", lambda: check_locked_then_catches_up(page, db)),
    ]
    try:
        for name, check in checks:
            try:
                check()
                print("ok   " + name)
            except Exception as e:  # every check runs; each failure is reported
                failures += 1
                print("FAIL %s: %s: %s" % (name, type(e).__name__, e))
                page.d.save_screenshot(os.path.join(WORK, "failed_%s.png" % name.replace(" ", "_").replace(":", "")))
        # The page logs no error (a CSP violation, a failed script, a refused request), except the
        # 503s the locked database answers on purpose.
        logs = [entry["message"] for entry in page.d.get_log("browser")
                if entry["level"] == "SEVERE" and "status of 503" not in entry["message"]]
        for message in logs:
            print("FAIL browser console: " + message)
        failures += len(logs)
    finally:
        page.d.quit()
        server.stop()
    print("%d of %d checks failed" % (failures, len(checks)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

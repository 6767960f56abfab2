"""What a notebook shows: a trial as an HTML table (steps per mode, tensors, workers, findings),
every name escaped as text, and charts as PNG images drawn by `trialdb plot`."""
import html
import os
import subprocess
import tempfile

from .connection import cli_path


def _cell(text):
    return html.escape(str(text), quote=True)


def trial_html(trial):
    steps = trial._rows("SELECT mode, count(*) FROM steps WHERE trial = ? AND complete GROUP BY mode ORDER BY mode")
    tensors = trial._rows("SELECT count(*) FROM tensors WHERE trial = ?")[0][0]
    collections = trial._column("SELECT DISTINCT collection FROM collections WHERE trial = ? ORDER BY collection")
    rows = [("steps", ", ".join("%s %d" % (m, n) for m, n in steps) or "none"),
            ("tensors", "%d in %d collection%s: %s" % (tensors, len(collections), "" if len(collections) == 1 else "s",
                                                        ", ".join(collections))),
            ("workers", ", ".join(trial.workers())),
            ("training", "ended" if trial.ended() else "not ended")]
    has_findings = trial.con.execute("SELECT 1 FROM sqlite_schema WHERE name = 'rule_findings'").fetchone()
    if has_findings:
        found = trial._rows("SELECT rule, count(*), min(step), max(step) FROM rule_findings WHERE trial = ? "
                            "GROUP BY rule ORDER BY rule")
        rows.append(("findings", "; ".join("%s: %d (steps %d-%d)" % f for f in found) or "none"))
    body = "".join("<tr><th style=\"text-align:left\">%s</th><td style=\"text-align:left\">%s</td></tr>"
                   % (_cell(k), _cell(v)) for k, v in rows)
    return "<table><caption>trial %s</caption>%s</table>" % (_cell(trial.name), body)


class PNG:
    """A chart as PNG bytes; IPython displays it (_repr_png_), save() writes it."""

    def __init__(self, data):
        self.data = data

    def _repr_png_(self):
        return self.data

    def save(self, path):
        with open(path, "wb") as f:
            f.write(self.data)


# Options of `trialdb plot` itself, which go before the chart kind.
_CHART_OPTIONS = ("width", "height", "title")


def _arguments(options):
    args = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value is False or value is None:
            continue
        elif isinstance(value, (list, tuple)):
            for item in value:
                args += [flag, str(item)]
        else:
            args += [flag, str(value)]
    return args


def plot(trial, kind, options):
    options = dict(options)
    chart = {k: options.pop(k) for k in _CHART_OPTIONS if k in options}
    options.setdefault("trial", trial.name)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "chart.png")
        command = [cli_path(), "plot", "--db", trial.path, "--out", out] + _arguments(chart) + [kind] + _arguments(options)
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError("trialdb plot %s failed: %s" % (kind, done.stderr.strip()))
        with open(out, "rb") as f:
            return PNG(f.read())

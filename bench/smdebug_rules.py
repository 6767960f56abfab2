#!/usr/bin/python3
"""The 20 built-in rules through smdebug, the reference of bench/run's "all rules against smdebug"
row: each rule as docs/RULES.md and the header of its rules_sql/<rule>.sql define it, written as
a user of smdebug's Trial API writes it (create_trial, then tensor(name).value(step, worker=...)
at every complete step, numpy for the arithmetic), one function per rule in the order of
docs/RULES.md.

  bench/smdebug_rules.py TRIAL_FOLDER [--param RULE.KEY=VALUE ...] [--other-trial FOLDER]
prints every finding as a JSON line {"rule", "tensor", "step", "worker", "value"}, then
"seconds=<s> cpu=<s> trial_seconds=<s> findings=<n>": the wall and user+system CPU time of the
rules (create_trial, whose time is trial_seconds, excluded, as the ingest is on trialdb's side).
Exits 2 when smdebug cannot be imported (set SMDEBUG_PATH to a folder holding the smdebug
package to use one that is not installed). smdebug is not a dependency of trialdb.
--other-trial is similar_across_runs' other_trial (without it that rule finds nothing, as
trialdb's does without the parameter). bench/smdebug_rules_check.py compares the findings with
trialdb's.
"""
import argparse
import bisect
import json
import logging
import os
import re
import resource
import sys
import time

import smdebug_env

smdebug_env.require()
# After require (SMDEBUG_PATH):
import numpy as np  # noqa: E402
from smdebug.core.access_layer.utils import has_training_ended  # noqa: E402
from smdebug.core.modes import ModeKeys  # noqa: E402
from smdebug.exceptions import SMDebugValueError, TensorUnavailableForStep  # noqa: E402
from smdebug.trials import create_trial  # noqa: E402

# The parameters' defaults, as docs/RULES.md's table lists them (strings, as --param gives them).
DEFAULTS = {
    "vanishing_gradient": {"threshold": "1e-7"},
    "exploding_tensor": {"collection_names": "", "tensor_regex": "", "only_nan": "false"},
    "weight_update_ratio": {"num_steps": "none", "large_threshold": "10", "small_threshold": "1e-8",
                            "epsilon": "1e-9"},
    "all_zero": {"collection_names": "", "tensor_regex": "", "threshold": "100"},
    "loss_not_decreasing": {"collection_names": "", "tensor_regex": "", "use_losses_collection": "true",
                            "num_steps": "10", "diff_percent": "0", "mode": "none"},
    "overfit": {"tensor_regex": "", "start_step": "0", "patience": "1", "ratio_threshold": "0.1"},
    "overtraining": {"patience_train": "5", "patience_validation": "10", "delta": "0.1"},
    "tensor_variance": {"collection_names": "", "tensor_regex": "", "max_threshold": "inf",
                        "min_threshold": "-inf"},
    "unchanged_tensor": {"collection_names": "", "tensor_regex": "", "num_steps": "3", "rtol": "1e-5",
                         "atol": "1e-8", "equal_nan": "false"},
    "dead_relu": {"tensor_regex": ".*relu_output", "threshold_inactivity": "1.0", "threshold_layer": "50.0"},
    "saturated_activation": {"collection_names": "", "tensor_regex": ".*tanh_input,.*sigmoid_input",
                             "threshold_tanh": "-9.4999,9.4999", "threshold_sigmoid": "-23,16.99999",
                             "threshold_inactivity": "1.0", "threshold_layer": "50.0"},
    "poor_weight_initialization": {"activation_inputs_regex": ".*relu_input", "threshold": "10.0",
                                   "distribution_range": "0.001", "patience": "5", "steps": "10"},
    "similar_across_runs": {"collection_names": "", "tensor_regex": ""},
    "class_imbalance": {"threshold_imbalance": "10", "threshold_misprediction": "0.7", "samples": "500",
                        "argmax": "false", "labels_regex": ".*labels", "predictions_regex": ".*predictions"},
    "confusion": {"category_no": "auto", "labels": "labels", "predictions": "predictions", "min_diag": "0.9",
                  "max_off_diag": "0.1"},
    "check_input_images": {"threshold_mean": "0.2", "threshold_samples": "500",
                           "regex": ".*hybridsequential0_input_0", "channel": "1"},
    "nlp_sequence_ratio": {"tensor_regex": ".*embedding0_input_0", "token_values": "0",
                           "token_thresholds_percent": "50"},
    "stalled_training": {"threshold": "1800"},
    "tree_depth": {"depth": "4", "tensor_regex": ".*trees/Node"},
    "feature_importance_overweight": {"threshold": "0.8", "nfeatures": "3",
                                      "tensor_regex": ".*feature_importance/weight"},
}


class Params:
    """One rule's parameters: the defaults, overridden by --param RULE.KEY=VALUE."""

    def __init__(self, values):
        self.values = values

    def real(self, key):
        return float(self.values[key])

    def integer(self, key):
        v = self.values[key]
        return None if v.lower() in ("none", "auto", "") else int(v)

    def boolean(self, key):
        return self.values[key].lower() == "true"

    def text(self, key):
        return self.values[key]

    def words(self, key):
        return [w for w in self.values[key].split(",") if w]

    def reals(self, key):
        return [float(w) for w in self.words(key)]


class Run:
    """A trial as the rules read it: its complete steps in order, their modes, the primary
    worker, and each value as float64 (None for strings, complex and reductions-only values)."""

    def __init__(self, trial):
        self.trial = trial
        self.steps = trial.steps()
        self.workers = trial.workers()
        self.primary = min(self.workers, key=worker_rank) if self.workers else None
        self.names = trial.tensor_names()
        self.saved = {}

    def mode(self, step):
        mode = self.trial.mode(step)
        return mode.name if mode is not None else "GLOBAL"

    def collection(self, name):
        try:
            return set(self.trial.collection(name).tensor_names) & set(self.names)
        except KeyError:
            return set()

    def select(self, params, everything_when_empty=False, regex_key="tensor_regex"):
        """The union of the collections of collection_names and the tensors a pattern of
        tensor_regex matches (re.search), sorted."""
        collections = params.words("collection_names") if "collection_names" in params.values else []
        patterns = [re.compile(p) for p in params.words(regex_key)] if regex_key in params.values else []
        if everything_when_empty and not collections and not patterns:
            return list(self.names)
        chosen = set()
        for c in collections:
            chosen |= self.collection(c)
        chosen |= {n for n in self.names if any(p.search(n) for p in patterns)}
        return sorted(chosen)

    def tensor_steps(self, name):
        # Asked once per tensor: tensor.steps() checks every step's completeness on each call,
        # so asking it at every step would make each rule quadratic in the steps.
        if name not in self.saved:
            self.saved[name] = set(self.trial.tensor(name).steps())
        return self.saved[name]

    def raw(self, name, step, worker):
        """The value as smdebug reads it; None where it has none (reductions only) or cannot
        read it (a dtype its reader does not know, such as int16; an empty float tensor)."""
        try:
            return np.asarray(self.trial.tensor(name).value(step, worker=worker))
        except (TensorUnavailableForStep, SMDebugValueError, KeyError):
            return None

    def value(self, name, step, worker):
        v = self.raw(name, step, worker)
        return numeric(v) if v is not None else None

    def values_at(self, names, step, primary_only=False):
        """(name, worker, value) of the tensors saved at step with a numeric raw value."""
        for name in names:
            if step not in self.tensor_steps(name):
                continue
            for worker in self.trial.tensor(name).workers(step):
                if primary_only and worker != self.primary:
                    continue
                v = self.value(name, step, worker)
                if v is not None:
                    yield name, worker, v


def numeric(v):
    """v as float64; None for strings and complex values, which the rules skip."""
    return v.astype(np.float64) if v.dtype.kind in "biuf" else None


def worker_rank(worker):
    digits = re.search(r"[0-9]*$", worker).group()
    return (digits == "", int(digits) if digits else 0, worker)


def finding(rule, step, tensor, worker, value):
    return {"rule": rule, "step": int(step), "tensor": tensor, "worker": worker,
            "value": None if value is None or not np.isfinite(value) else float(value)}


def mean_loss(v):
    return float(np.mean(v)) if v is not None and v.size else float("nan")


# ---- the rules, in the order of docs/RULES.md ----

def vanishing_gradient(run, p):
    names = sorted(run.collection("gradients"))
    for step in run.steps:
        for name, worker, v in run.values_at(names, step):
            m = np.mean(np.abs(v)) if v.size else np.nan
            if m < p.real("threshold"):
                yield finding("vanishing_gradient", step, name, worker, m)


def exploding_tensor(run, p):
    names = run.select(p, everything_when_empty=True)
    for step in run.steps:
        for name, worker, v in run.values_at(names, step):
            bad = np.isnan(v) if p.boolean("only_nan") else ~np.isfinite(v)
            count = int(np.count_nonzero(bad))
            if count:
                yield finding("exploding_tensor", step, name, worker, count)


def weight_update_ratio(run, p):
    train = {run.trial.global_step(ModeKeys.TRAIN, m) for m in run.trial.steps(mode=ModeKeys.TRAIN)}
    considered = [s for s in run.steps if s in train] if train else run.steps
    num_steps = p.integer("num_steps")
    names = sorted(run.collection("weights"))
    previous = {}  # (tensor, worker) -> (step, value)
    for step in considered:
        for name, worker, v in run.values_at(names, step):
            before = previous.get((name, worker))
            previous[(name, worker)] = (step, v)
            if before is None or (num_steps is not None and before[0] < step - num_steps):
                continue
            if before[1].shape != v.shape:
                continue
            ratio = np.linalg.norm(v - before[1]) / (np.linalg.norm(before[1]) + p.real("epsilon"))
            if ratio > p.real("large_threshold") or ratio < p.real("small_threshold"):
                yield finding("weight_update_ratio", step, name, worker, ratio)


def all_zero(run, p):
    names = run.select(p)
    for step in run.steps:
        for name, worker, v in run.values_at(names, step):
            if v.size:
                percent = 100.0 * np.count_nonzero(v == 0) / v.size
                if percent >= p.real("threshold"):
                    yield finding("all_zero", step, name, worker, percent)


def loss_not_decreasing(run, p):
    names = set(run.select(p))
    if p.boolean("use_losses_collection"):
        names |= run.collection("losses")
    given = None if p.text("mode").lower() in ("none", "") else p.text("mode").upper()
    num_steps, diff = p.integer("num_steps"), p.real("diff_percent")
    # The losses, per tensor: the primary worker's mean at each complete step, by mode.
    by_mode = {name: {} for name in names}
    for step in run.steps:
        for name, _, v in run.values_at(sorted(names), step, primary_only=True):
            by_mode[name].setdefault(run.mode(step), []).append((step, mean_loss(v)))
    for name in sorted(names):
        mode = given or next((m for m in ("EVAL", "TRAIN") if by_mode[name].get(m)), "GLOBAL")
        if mode == "GLOBAL":  # every step of the tensor, numbered by global step
            series = sorted((s, s, loss) for losses in by_mode[name].values() for s, loss in losses)
        else:
            series = [(run.trial.mode_step(s), s, loss) for s, loss in by_mode[name].get(mode, [])]
        last, seen_steps, seen_losses = None, [], []
        for m, step, loss in series:
            earlier = bisect.bisect_right(seen_steps, m - num_steps)  # the saved m' <= m - num_steps
            seen_steps.append(m)
            seen_losses.append(loss)
            if earlier and (last is None or m >= last + num_steps):
                last = m
                loss_p = seen_losses[earlier - 1]
                if loss_p - loss <= abs(loss_p) * diff / 100:
                    yield finding("loss_not_decreasing", step, name, run.primary, loss)


def overfit(run, p):
    names = run.select(p) if p.words("tensor_regex") else sorted(run.collection("losses"))
    start, patience, threshold = p.integer("start_step"), p.integer("patience"), p.real("ratio_threshold")
    state = {name: {"mode": None, "train": (0.0, 0), "eval": (0.0, 0), "counter": 0} for name in names}
    for step in run.steps:
        mode = run.mode(step)
        for name, _, v in run.values_at(names, step, primary_only=True):
            loss = mean_loss(v)
            if np.isnan(loss):
                continue
            s = state[name]
            block = "train" if mode == "TRAIN" else "eval" if mode == "EVAL" else None
            if block:
                total, n = s[block] if s["mode"] == mode else (0.0, 0)
                s[block] = (total + loss, n + 1)
            s["mode"] = mode
            if mode == "EVAL" and step >= start and s["train"][1]:
                train = s["train"][0] / s["train"][1]
                val = s["eval"][0] / s["eval"][1]
                ratio = (val - train) / train if train else np.nan
                s["counter"] = s["counter"] + 1 if ratio > threshold else 0
                if s["counter"] >= patience:
                    yield finding("overfit", step, name, run.primary, ratio)


def overtraining(run, p):
    names = sorted(run.collection("losses"))
    patience = {"TRAIN": p.integer("patience_train"), "EVAL": p.integer("patience_validation")}
    best = {name: {} for name in names}      # mode -> best loss
    counter = {name: {} for name in names}   # mode -> losses without improvement
    for step in run.steps:
        mode = run.mode(step)
        if mode not in patience:
            continue
        for name, _, v in run.values_at(names, step, primary_only=True):
            loss = mean_loss(v)
            if mode not in best[name]:
                best[name][mode], counter[name][mode] = loss, 0
            elif loss < best[name][mode] - p.real("delta"):
                best[name][mode], counter[name][mode] = loss, 0
            else:
                counter[name][mode] += 1
            c = counter[name]
            if len(c) == 2 and c["TRAIN"] >= patience["TRAIN"] and c["EVAL"] >= patience["EVAL"]:
                yield finding("overtraining", step, name, run.primary, c["EVAL"])


def tensor_variance(run, p):
    names = run.select(p)
    for step in run.steps:
        for name, worker, v in run.values_at(names, step):
            var = np.var(v) if v.size else np.nan
            if var > p.real("max_threshold") or var < p.real("min_threshold"):
                yield finding("tensor_variance", step, name, worker, var)


def unchanged_tensor(run, p):
    names = run.select(p)
    n = p.integer("num_steps")
    history = {}  # (tensor, worker) -> the last num_steps saved values (None: a string)
    for step in run.steps:
        for name in names:
            if step not in run.tensor_steps(name):
                continue
            tensor = run.trial.tensor(name)
            for worker in tensor.workers(step):
                raw = run.raw(name, step, worker)
                if raw is None:
                    continue
                v = numeric(raw)
                window = history.setdefault((name, worker), [])
                window.append(v)
                del window[:-n]
                if len(window) == n and v is not None and all(
                        x is not None and x.shape == v.shape
                        and np.allclose(x, v, rtol=p.real("rtol"), atol=p.real("atol"),
                                        equal_nan=p.boolean("equal_nan"))
                        for x in window[:-1]):
                    yield finding("unchanged_tensor", step, name, worker, n)


def inactive_percent(v, active, threshold_inactivity):
    """100 * the units whose active batch entries are below threshold_inactivity percent / units;
    axis 0 is the batch when v has 2 or more dims, else v is one unit."""
    a = active(v)
    if v.ndim >= 2:
        if v.shape[0] == 0 or a[0].size == 0:
            return None
        activity = 100.0 * a.mean(axis=0)
        return 100.0 * np.count_nonzero(activity < threshold_inactivity) / activity.size
    if v.size == 0:
        return None
    return 100.0 if 100.0 * a.mean() < threshold_inactivity else 0.0


def dead_relu(run, p):
    names = run.select(p)
    for step in run.steps:
        for name, worker, v in run.values_at(names, step):
            percent = inactive_percent(v, lambda x: x > 0, p.real("threshold_inactivity"))
            if percent is not None and percent > p.real("threshold_layer"):
                yield finding("dead_relu", step, name, worker, percent)


def saturated_activation(run, p):
    names = run.select(p)
    for step in run.steps:
        for name, worker, v in run.values_at(names, step):
            kind = "tanh" if "tanh" in name else "sigmoid" if "sigmoid" in name else None
            if kind is None:
                continue
            lo, hi = p.reals("threshold_" + kind)
            percent = inactive_percent(v, lambda x: (lo < x) & (x < hi), p.real("threshold_inactivity"))
            if percent is not None and percent > p.real("threshold_layer"):
                yield finding("saturated_activation", step, name, worker, percent)


def poor_weight_initialization(run, p):
    rule = "poor_weight_initialization"
    activations = run.select(p, regex_key="activation_inputs_regex")
    gradients = sorted(run.collection("gradients"))
    losses = sorted(run.collection("losses"))[:1]
    patience, seen = p.integer("patience"), []
    for step in run.steps[:p.integer("steps")]:
        variances = [np.var(v) for _, _, v in run.values_at(activations, step, primary_only=True) if v.size]
        if len(variances) >= 2 and min(variances) > 0 and max(variances) / min(variances) > p.real("threshold"):
            yield finding(rule, step, "activation_variance_ratio", run.primary, max(variances) / min(variances))
        ranges = [np.percentile(v, 95) - np.percentile(v, 5)
                  for _, _, v in run.values_at(gradients, step, primary_only=True) if v.size]
        if ranges and min(ranges) < p.real("distribution_range"):
            yield finding(rule, step, "gradient_distribution", run.primary, min(ranges))
        if run.mode(step) in ("TRAIN", "GLOBAL"):
            for _, _, v in run.values_at(losses, step, primary_only=True):
                seen.append(mean_loss(v))
                if len(seen) > patience and seen[-1] >= seen[-1 - patience]:
                    yield finding(rule, step, "loss", run.primary, seen[-1])


def similar_across_runs(run, p, other):
    if other is None:
        return
    names = run.select(p, everything_when_empty=True)
    other_steps = set(other.steps)
    for step in run.steps:
        if step not in other_steps:
            continue
        for name, worker, v in run.values_at(names, step):
            if name not in other.names or step not in other.tensor_steps(name) \
                    or worker not in other.trial.tensor(name).workers(step):
                continue
            w = other.value(name, step, worker)
            if w is None:
                continue
            if v.shape != w.shape:
                yield finding("similar_across_runs", step, name, worker, None)
            elif not np.allclose(v, w, rtol=1e-5, atol=1e-8):
                yield finding("similar_across_runs", step, name, worker, np.linalg.norm(v - w))


def first_matching(run, pattern):
    patterns = [re.compile(x) for x in pattern.split(",") if x]
    return next((n for n in run.names if any(x.search(n) for x in patterns)), None)


def class_imbalance(run, p):
    labels, predictions = first_matching(run, p.text("labels_regex")), first_matching(run, p.text("predictions_regex"))
    if labels is None or predictions is None:
        return
    counts, wrong = {}, {}
    for step in run.steps:
        got = {n: v for n, _, v in run.values_at([labels, predictions], step, primary_only=True)}
        if len(got) < 2:
            continue
        y, yhat = got[labels], got[predictions]
        if p.boolean("argmax"):
            yhat = np.argmax(yhat, axis=-1) if yhat.ndim else yhat
        if y.size != yhat.size:
            continue
        for label, prediction in zip(y.ravel().astype(int), yhat.ravel().astype(int)):
            counts[label] = counts.get(label, 0) + 1
            wrong[label] = wrong.get(label, 0) + (label != prediction)
        if sum(counts.values()) < p.integer("samples"):
            continue
        ratio = max(counts.values()) / min(counts.values())
        if ratio > p.real("threshold_imbalance"):
            yield finding("class_imbalance", step, "imbalance", run.primary, ratio)
        for label in sorted(counts):
            fraction = wrong[label] / counts[label]
            if fraction > p.real("threshold_misprediction"):
                yield finding("class_imbalance", step, f"class_{label}", run.primary, fraction)


def confusion(run, p):
    labels, predictions = p.text("labels"), p.text("predictions")
    if labels not in run.names or predictions not in run.names:
        return
    for step in run.steps:
        got = {}
        for name, worker, v in run.values_at([labels, predictions], step):
            got.setdefault(worker, {})[name] = v
        for worker, pair in sorted(got.items()):
            if len(pair) < 2 or pair[labels].size != pair[predictions].size:
                continue
            # Class indices, truncated toward zero; a NaN label has no class.
            y, yhat = np.trunc(pair[labels].ravel()), np.trunc(pair[predictions].ravel())
            keep = ~np.isnan(y)
            y, yhat = y[keep], yhat[keep]
            for i in np.unique(y):
                row = yhat[y == i]
                right = np.count_nonzero(row == i) / row.size
                classes, counts = np.unique(row[(row != i) & ~np.isnan(row)], return_counts=True)
                off = counts.max() / row.size if counts.size else 0.0
                if right < p.real("min_diag") or off > p.real("max_off_diag"):
                    yield finding("confusion", step, f"class_{i:g}", worker, right)


def check_input_images(run, p):
    names = [n for n in run.select(p, regex_key="regex")]
    axis = p.integer("channel")
    state = {}  # name -> (samples, elements per channel, per-channel sums)
    for step in run.steps:
        for name, _, v in run.values_at(names, step, primary_only=True):
            if v.ndim != 4:
                continue
            sums = np.sum(np.moveaxis(v, axis, 0).reshape(v.shape[axis], -1), axis=1)
            per_channel = v.size // v.shape[axis] if v.shape[axis] else 0
            samples, elements, total = state.get(name, (0, 0, None))
            if total is None or total.size != sums.size:
                samples, elements, total = 0, 0, np.zeros_like(sums)
            state[name] = (samples + v.shape[0], elements + per_channel, total + sums)
            samples, elements, total = state[name]
            if samples >= p.integer("threshold_samples") and elements:
                largest = np.max(np.abs(total / elements))
                if largest > p.real("threshold_mean"):
                    yield finding("check_input_images", step, name, run.primary, largest)


def nlp_sequence_ratio(run, p):
    names = run.select(p)
    pairs = list(zip(p.reals("token_values"), p.reals("token_thresholds_percent")))
    for step in run.steps:
        for name, worker, v in run.values_at(names, step):
            if not v.size:
                continue
            over = [100.0 * np.count_nonzero(v == token) / v.size for token, threshold in pairs]
            over = [x for x, (_, threshold) in zip(over, pairs) if x > threshold]
            if over:
                yield finding("nlp_sequence_ratio", step, name, worker, max(over))


def stalled_training(run, p):
    # Never fires on a trial that has ended; a live one is stalled when its newest file is older
    # than the threshold.
    if has_training_ended(run.trial.path) or not run.steps:
        return
    newest = max(os.path.getmtime(os.path.join(d, f))
                 for d, _, files in os.walk(run.trial.path) for f in files)
    if time.time() - newest > p.real("threshold"):
        yield finding("stalled_training", run.steps[-1], "no_progress", run.primary, time.time() - newest)


def tree_depth(run, p):
    names = run.select(p)
    for step in run.steps:
        for name, worker, v in run.values_at(names, step):
            if v.size and not np.isnan(v).any():
                top = np.max(v)
                if top > 0 and np.log2(top) < p.integer("depth"):
                    yield finding("tree_depth", step, name, worker, np.log2(top))


def feature_importance_overweight(run, p):
    names = run.select(p)
    for step in run.steps:
        x = sorted((np.sum(v) for _, _, v in run.values_at(names, step, primary_only=True)), reverse=True)
        if x and sum(x) > 0:
            share = sum(x[:p.integer("nfeatures")]) / sum(x)
            if share > p.real("threshold"):
                yield finding("feature_importance_overweight", step, "top_features", run.primary, share)


RULES = [vanishing_gradient, exploding_tensor, weight_update_ratio, all_zero, loss_not_decreasing, overfit,
         overtraining, tensor_variance, unchanged_tensor, dead_relu, saturated_activation,
         poor_weight_initialization, similar_across_runs, class_imbalance, confusion, check_input_images,
         nlp_sequence_ratio, stalled_training, tree_depth, feature_importance_overweight]


def parse_params(pairs):
    params = {rule: dict(values) for rule, values in DEFAULTS.items()}
    for pair in pairs:
        key, _, value = pair.partition("=")
        rule, _, name = key.partition(".")
        if rule not in params or name not in params[rule]:
            sys.exit(f"smdebug_rules.py: unknown parameter {key}")
        params[rule][name] = value
    return {rule: Params(values) for rule, values in params.items()}


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trial")
    parser.add_argument("--param", action="append", default=[], metavar="RULE.KEY=VALUE")
    parser.add_argument("--other-trial", metavar="FOLDER")
    args = parser.parse_args()
    params = parse_params(args.param)
    logging.disable(logging.WARNING)
    start = time.time()
    run = Run(create_trial(args.trial))
    other = Run(create_trial(args.other_trial)) if args.other_trial else None
    trial_seconds = time.time() - start
    start, cpu, count = time.time(), cpu_seconds(), 0
    for rule in RULES:
        found = rule(run, params[rule.__name__], other) if rule is similar_across_runs \
            else rule(run, params[rule.__name__])
        for f in found:
            print(json.dumps(f))
            count += 1
    print(f"seconds={time.time() - start:.3f} cpu={cpu_seconds() - cpu:.3f} "
          f"trial_seconds={trial_seconds:.3f} findings={count}")


if __name__ == "__main__":
    main()

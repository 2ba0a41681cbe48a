#!/usr/bin/env python3
"""Predict from an rdt model exported with rdt_export(model), without SQLite or the extension.

A reference reader of the JSON documented in sql/model-format.md: it applies the same row rules
(clamping, midpoint for missing numbers, TEXT read as SQLite reads numbers, so '1.0' matches the
category 1, the `other` bucket for unknown categories), walks the
trees and post-processes the released leaf values exactly as the extension does, in the same order
of floating-point operations, so its predictions agree with rdt_predict.

    python3 examples/rdt_reader.py model.json rows.csv      # prints one prediction per row
    (rows.csv: a header with the feature names, then one row per line; empty cells are missing)
"""
import csv
import json
import math
import re
import sys

# SQLite's numeric affinity (what a NUMERIC column stores; the extension reads TEXT through it):
# optional spaces, sign, digits with an optional point, an optional exponent, optional spaces.
_SPACES = " \t\n\v\f\r"
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INTEGER = re.compile(r"[+-]?[0-9]+")


def sqlite_number(text):
    """The number SQLite reads in a TEXT value (an int when it is an integer that fits 64 bits), or None."""
    s = text.strip(_SPACES)
    if not _NUMBER.fullmatch(s):
        return None
    if _INTEGER.fullmatch(s) and -2**63 <= int(s) < 2**63:
        return int(s)
    return float(s)


def canonical(value):
    """The text a listed value, or a number, matches by: integers (and integral floats) as decimal
    digits, other finite floats with 17 significant digits; None for an infinite or NaN float."""
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        if value == math.floor(value) and abs(value) < 9e15:
            return str(int(value))
        return format(value, ".17g")
    return str(value)


def match(codes, v):
    """The rule of sql/reference.md ("Rules for row values") for categories and labels: TEXT spelled as
    a listed value is that value; any other value SQLite reads as a finite number ('1.0', ' 1 ', 1.0)
    matches by its number; anything else (None, bytes, other text) matches nothing (None)."""
    if v is None or isinstance(v, (bytes, bytearray)):
        return None
    if isinstance(v, str):
        if v in codes:
            return codes[v]
        v = sqlite_number(v)
        if v is None:
            return None
    key = canonical(v)
    return codes.get(key) if key is not None else None


class Model:
    def __init__(self, doc):
        if doc.get("format") != "rdt-model-json" or doc.get("format_version") != 1:
            raise ValueError("not an rdt model export (format rdt-model-json, version 1)")
        if doc.get("layout") == "multiway" or doc.get("vote") == 4:
            raise ValueError("this reader predicts with complete binary trees and the majority, threshold and "
                             "probabilistic votes; multiway forests (matrix, rdt#) and weight voting need the extension")
        self.doc = doc
        self.features = doc["features"]
        self.classes = doc["classes"]
        self.depth = doc["depth"]
        self.trees = doc["trees"]
        self.regression = doc["task"] == "regression"
        self.vote = {1: "majority", 2: "threshold", 3: "probabilistic"}[doc["vote"]]
        self.scale = doc["noise_scale"]
        self.codes = [None if f["type"] == "numeric" else {canonical(v): i for i, v in enumerate(f["values"])}
                      for f in self.features]
        self.tables = [self._prepare(leaves) for leaves in doc["leaves"]]
        # "keep_trees": only these trees vote (chosen from the released counters when it was trained).
        kept = doc.get("voting_trees")
        self.voting = list(range(self.trees)) if kept is None else list(kept["trees"])

    # --- row rules ------------------------------------------------------------------------------
    def clean(self, row):
        xs = []
        for f, codes, v in zip(self.features, self.codes, row):
            if codes is None:
                x = _number(v)
                if x is None or math.isnan(x):
                    xs.append(f["min"] / 2 + f["max"] / 2)
                else:
                    xs.append(min(max(x, f["min"]), f["max"]))
            else:
                code = match(codes, v)
                xs.append(float(len(f["values"]) if code is None else code))
        return xs

    # --- trees ----------------------------------------------------------------------------------
    def leaf(self, t, xs):
        nodes, idx = self.doc["nodes"][t], 0
        for _ in range(self.depth):
            kind, feature, value = nodes[idx]
            x = xs[feature]
            if kind == "numeric":
                left = x < value
            elif kind == "equals":
                left = x == value
            elif kind == "subset":
                left = _member(int(value, 16), int(x))
            else:
                left = True
            idx = 2 * idx + 2 - (1 if left else 0)
        return idx - (2 ** self.depth - 1)

    # --- post-processing of released values (forest.c: rdt_forest_prepare) ----------------------
    def _prepare(self, leaves):
        table = []
        for n in leaves:
            if self.regression:
                lo, hi = self.doc["target"]["min"], self.doc["target"]["max"]
                pseudo = self.scale / 2
                count = float(n[0]) if n[0] > 0 else 0.0
                total = math.ldexp(float(n[1]), -16) if n[1] > 0 else 0.0
                unit = (total + 0.5 * pseudo) / (count + pseudo) if count + pseudo > 0 else 0.5
                table.append(lo + (hi - lo) * min(unit, 1.0))
                continue
            c = len(n)
            pseudo = self.scale / 2
            total = 0.0
            best = 0
            for k in range(c):
                if n[k] > 0:
                    total += float(n[k])
                if n[k] > n[best]:
                    best = k
            if total <= 0:
                table.append(([1.0 / c] * c, None))
                continue
            second = None
            theta = []
            for k in range(c):
                theta.append(((float(n[k]) if n[k] > 0 else 0.0) + pseudo) / (total + c * pseudo))
                if k != best and (second is None or n[k] > second):
                    second = n[k]
            lead = float(n[best]) if c == 1 else float(n[best]) - float(second)
            table.append((theta, best if lead > self.scale else None))
        return table

    def predict(self, row):
        xs = self.clean(row)
        if self.regression:
            return sum(self.tables[t][self.leaf(t, xs)] for t in range(self.trees)) / self.trees
        c = len(self.classes)
        theta_sum, votes, voters = [0.0] * c, [0.0] * c, 0
        for t in self.voting:
            theta, vote = self.tables[t][self.leaf(t, xs)]
            for k in range(c):
                theta_sum[k] += theta[k]
            if vote is not None:
                votes[vote] += 1
                voters += 1
        if self.vote == "majority":
            best = 0
            for k in range(1, c):
                if votes[k] > votes[best] or (votes[k] == votes[best] and theta_sum[k] > theta_sum[best]):
                    best = k
            return self.classes[best]
        proba = [s / len(self.voting) for s in theta_sum]
        best = 0
        for k in range(1, c):
            if proba[k] > proba[best]:
                best = k
        return self.classes[best]  # probabilistic models: the most likely class


def _number(v):
    """A numeric feature's value as SQLite reads it, or None (missing)."""
    if v is None or isinstance(v, (bytes, bytearray)):
        return None
    if isinstance(v, (bool, int, float)):
        return float(v)
    x = sqlite_number(v)
    return None if x is None else float(x)


def _member(mask, code):
    if code < 64:
        return (mask >> code) & 1 == 1
    m = 0xFFFFFFFFFFFFFFFF
    z = (mask ^ ((code * 0x9E3779B97F4A7C15) & m)) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return (z ^ (z >> 31)) & 1 == 1


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        model = Model(json.load(f))
    with open(sys.argv[2], newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        names = [ft["name"] for ft in model.features]
        order = [header.index(n) for n in names]
        for row in reader:
            values = [row[i] if row[i] != "" else None for i in order]
            print(model.predict(values))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Predict from an rdt model exported with rdt_export(model), without SQLite or the extension.

A reference reader of the JSON documented in sql/model-format.md: it applies the same row rules
(clamping, midpoint for missing numbers, TEXT read as SQLite reads numbers, so '1.0' matches the
category 1, the `other` bucket for unknown categories), walks the
trees and post-processes the released leaf values exactly as the extension does, in the same order
of floating-point operations, so its predictions agree with rdt_predict.

A learner model ("algorithm": "auto", the default, or a learner named) is exported with its BLOB
as hex ("model_hex"): the reader checks it as the extension's decoder does (checksum, sections,
every payload; a corrupted or edited model is refused with a message, exit status 1) and predicts
with constant, naive_bayes (bayes and moments readouts), boost, private_tree, random_trees,
matrix_forest, and whichever of them auto chose (sql/model-format.md, "Learner payloads"). It
does not verify signatures (rdt_verify does).

The model is the authority, the readable members its views: a learner export's "learner", "task",
"epsilon", "classes", "features" and "model_format" must be what its "model_hex" decodes to, and a
forest export's redundant members ("privacy.epsilon" beside "epsilon_num", "epsilon_den",
"neighbouring", "noise_scale", "model_format") what its other members give, as JSON values (key
order, spacing and number spelling free; a member edited, missing, added or repeated is refused,
named by its path), as rdt_import refuses them (sql/model-format.md, "Exports").

    python3 examples/rdt_reader.py model.json rows.csv      # prints one prediction per row
    (rows.csv: a header with the feature names, then one row per line; empty cells are missing)
"""
import csv
import hashlib
import json
import math
import re
import struct
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


def feature_codes(features):
    """Per feature: None (numeric), or the listed values' canonical texts -> codes."""
    return [None if f["type"] == "numeric" else {canonical(v): i for i, v in enumerate(f["values"])}
            for f in features]


def clean_row(features, codes, row):
    """The cleaned row (ext/core/forests/forest.h rdt_numeric_clean, ext/sql_values.c): numeric values clamped
    into [min, max], missing ones (NULL, NaN, not a number) at the midpoint min/2 + max/2; categories
    as their codes, anything unlisted as the `other` code n_values."""
    xs = []
    for f, codes, v in zip(features, codes, row):
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


class Model:
    def __init__(self, doc):
        if doc.get("format") != "rdt-model-json" or doc.get("format_version") != 1:
            raise ValueError("not an rdt model export (format rdt-model-json, version 1)")
        if doc.get("layout") == "multiway" or doc.get("vote") == 4:
            raise ValueError("this reader predicts with complete binary trees and the majority, threshold and "
                             "probabilistic votes; multiway forests (matrix, rdt#) and weight voting need the extension")
        check_forest_views(doc)
        self.doc = doc
        self.features = doc["features"]
        self.classes = doc["classes"]
        self.depth = doc["depth"]
        self.trees = doc["trees"]
        self.regression = doc["task"] == "regression"
        self.vote = {1: "majority", 2: "threshold", 3: "probabilistic"}[doc["vote"]]
        self.scale = doc["noise_scale"]
        self.codes = feature_codes(self.features)
        self.tables = [self._prepare(leaves) for leaves in doc["leaves"]]
        # "keep_trees": only these trees vote (chosen from the released counters when it was trained).
        kept = doc.get("voting_trees")
        self.voting = list(range(self.trees)) if kept is None else list(kept["trees"])

    # --- row rules ------------------------------------------------------------------------------
    def clean(self, row):
        return clean_row(self.features, self.codes, row)

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


# ================================================================================================
# Learner models ("algorithm": "auto" and the learners behind ext/core/learner.h). Their export
# carries the model BLOB as hex ("model_hex"); the reader decodes it (sql/model-format.md, "Learner
# models") and predicts as the learner's predict() does, in the same order of floating-point
# operations, with the label chosen as rdt_predict chooses it (the most probable class, ties to
# the first listed).
# ================================================================================================

class ModelError(ValueError):
    """A model the reader refuses: corrupted, edited, or of a kind it does not predict with."""


_HEADER_BYTES, _CHECKSUM_BYTES = 48, 32
_FLAG_SEEDED, _FLAG_NONPRIVATE, _FLAG_SIGNED, _FLAG_LEARNER = 1, 2, 4, 16
_FLAG_DOMAIN_FROM_ROWS = 32  # a class or category list copied from the rows: not for release
_MAX_FEATURES, _MAX_VALUES, _MAX_CLASSES, _MAX_NAME = 1000, 65535, 65534, 1024
_LEARNERS = {1: "constant", 2: "naive_bayes", 3: "boost", 4: "random_trees", 5: "auto", 6: "private_tree",
             7: "matrix_forest"}


class _Bytes:
    """A bounded little-endian reader: reading past the end is a ModelError, never an IndexError."""

    def __init__(self, data, pos=0, end=None):
        self.data, self.pos = data, pos
        self.end = len(data) if end is None else end

    def take(self, n):
        if n < 0 or self.end - self.pos < n:
            raise ModelError("invalid model: truncated section or payload")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def u8(self):
        return self.take(1)[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def i64(self):
        return struct.unpack("<q", self.take(8))[0]

    def f64(self):
        return struct.unpack("<d", self.take(8))[0]

    def text(self):
        try:
            return self.take(self.u32()).decode("utf-8")
        except UnicodeDecodeError:
            raise ModelError("invalid model: a name or value is not UTF-8") from None

    def left(self):
        return self.end - self.pos


def _value(r):
    kind = r.u8()
    if kind == 1:
        return r.i64()
    if kind == 3:
        return r.text()
    raise ModelError("invalid model: malformed schema (value type %d)" % kind)


def _values(r, least, most):
    n = r.u32()
    if n < least or n > most or n > r.left():
        raise ModelError("invalid model: malformed schema")
    return [_value(r) for _ in range(n)]


def _schema(r):
    """SCHM: the features (as the JSON export writes them) and the classes."""
    nf = r.u32()
    if nf == 0 or nf > _MAX_FEATURES:
        raise ModelError("invalid model: malformed schema")
    features = []
    for _ in range(nf):
        name = r.text()
        if not 0 < len(name.encode("utf-8")) <= _MAX_NAME:
            raise ModelError("invalid model: malformed schema")
        kind = r.u8()
        if kind == 1:
            lo, hi = r.f64(), r.f64()
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                raise ModelError("invalid model: malformed schema (numeric bounds)")
            features.append({"name": name, "type": "numeric", "min": lo, "max": hi})
        elif kind == 2:
            features.append({"name": name, "type": "categorical", "values": _values(r, 1, _MAX_VALUES)})
        else:
            raise ModelError("invalid model: malformed schema (feature type %d)" % kind)
    classes = _values(r, 0, _MAX_CLASSES)
    if len({f["name"] for f in features}) != nf:
        raise ModelError("invalid model: malformed schema (repeated feature name)")
    return features, classes


def _eps(num):
    """rdt_eps_to_double: num / 2^32, exact (num < 2^53)."""
    return math.ldexp(float(num), -32)


# ---- readable views checked against the model (ext/core/json_io.h contract 5) -------------------

_EDITED = ": an edited export; read the document rdt_export wrote"


class _Object(dict):
    """A JSON object that remembers the first member name it met twice (json.load keeps the last)."""
    repeated = None


def _object(pairs):
    o = _Object()
    for k, v in pairs:
        if k in o and o.repeated is None:
            o.repeated = k
        o[k] = v
    return o


def _refuse_constant(name):
    raise ModelError("not JSON (%s is not a JSON number)" % name)


def parse_export(text):
    """The export's JSON with repeated members remembered and NaN / Infinity refused."""
    try:
        return json.loads(text, object_pairs_hook=_object, parse_constant=_refuse_constant)
    except ModelError:
        raise
    except ValueError as e:
        raise ModelError("not JSON (%s)" % e) from None
    except RecursionError:
        raise ModelError("not JSON (nested too deeply)") from None


def _json_kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    return "string" if isinstance(v, str) else "array" if isinstance(v, list) else "object"


def _show(v):
    """A value as the messages show it: scalars as JSON (strings cut at 40 characters), containers by size."""
    kind = _json_kind(v)
    if kind == "null":
        return "null"
    if kind == "bool":
        return "true" if v else "false"
    if kind == "number":
        return repr(v) if math.isfinite(v) else "a number out of range"
    if kind == "string":
        return json.dumps(v[:40], ensure_ascii=False)[:-1] + ("..." if len(v) > 40 else "") + '"'
    if kind == "array":
        return "an array of %d" % len(v)
    return "an object of %d members" % len(v)


def _path(path, key):
    return "%s.%s" % (path, key) if path else key


def _first_difference(given, want, path=""):
    """rdt_json_same_export's rule: the first difference of two JSON values as a message, or None.
    Members by name in the export's order, then members the export lacks, then repeated ones;
    numbers by value (Python compares an int and a float exactly); arrays element by element."""
    where = 'the document\'s "%s"' % path if path else "the document"
    if _json_kind(given) != _json_kind(want):
        return "%s (%s) disagrees with the model it carries (%s)" % (where, _show(given), _show(want))
    if isinstance(want, list):
        if len(given) != len(want):
            return "%s (%s) disagrees with the model it carries (%s)" % (where, _show(given), _show(want))
        for i, (g, w) in enumerate(zip(given, want)):
            d = _first_difference(g, w, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    if isinstance(want, dict):
        for k, w in want.items():
            if k not in given:
                return 'the document lacks "%s", which the model it carries has (%s)' % (_path(path, k), _show(w))
            d = _first_difference(given[k], w, _path(path, k))
            if d:
                return d
        for k, g in given.items():
            if k not in want:
                return 'the document\'s "%s" (%s) is not in the model it carries' % (_path(path, k), _show(g))
        if getattr(given, "repeated", None) is not None:
            return 'the document\'s "%s" appears more than once' % _path(path, given.repeated)
        return None
    if given != want:
        return "%s (%s) disagrees with the model it carries (%s)" % (where, _show(given), _show(want))
    return None


def check_views(doc, want):
    """Refuses doc unless it is the export want as JSON values."""
    d = _first_difference(doc, want)
    if d:
        raise ModelError(d + _EDITED)


def _count(obj, key):
    """An integer member (the binary-equivalent ones the views are computed from)."""
    v = obj.get(key) if isinstance(obj, dict) else None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ModelError('not a complete rdt model export ("%s" must be a non-negative integer)' % key)
    return v


def _ratio(a, b):
    """a / b as C divides doubles; C writes the infinity of b = 0 as null."""
    return a / b if b else None


def check_forest_views(doc):
    """A forest export (RDT, DiPriMe): the members rdt_import reads are the model; the rest must be
    what they give (forest_json.c, in its order): model_format a version this reader knows,
    neighbouring from the unit, epsilon from epsilon_num, epsilon_den 2^32, noise_scale
    (rdt_forest_leaf_scale), no member the exporter does not write."""
    members = ["format", "format_version", "model_format", "model_id", "domain_from_rows", "seeded", "privacy",
               "algorithm", "task",
               "trees", "depth", "vote", "splits", "categorical", "auto_depth", "epsilon_count_num", "row_count",
               "candidates", "partition", "rho", "target", "noise_scale", "features", "classes", "label", "nodes", "leaves",
               "voting_trees", "signature"]
    views = {"model_format", "noise_scale"}
    for k in members:
        if k not in doc and k not in views and k not in ("voting_trees", "domain_from_rows", "label"):
            raise ModelError('not a complete rdt model export (it lacks "%s")' % k)
    priv = doc["privacy"]
    if not isinstance(priv, dict) or not isinstance(priv.get("private"), bool):
        raise ModelError('not a complete rdt model export ("privacy" must hold "private")')
    want_priv = {"private": priv["private"]}
    unit = priv.get("unit")
    want_priv["neighbouring"] = ("add/remove one unit" if isinstance(unit, dict) and unit.get("column")
                                 else "add/remove one row")
    if "unit" in priv:
        want_priv["unit"] = unit
    diprime = doc["algorithm"] == "diprime"
    scale = 0.0
    if priv["private"]:
        num = _count(priv, "epsilon_num")
        want_priv.update(epsilon=_eps(num), epsilon_num=num, epsilon_den=1 << 32)
        if diprime:
            leaf = _count(priv, "epsilon_leaf_num")
            want_priv.update(epsilon_query_num=_count(priv, "epsilon_query_num"), epsilon_leaf_num=leaf)
            scale = _ratio(2.0 if doc["task"] == "regression" else 1.0, _eps(leaf))
        else:
            scale = _ratio(float(_count(doc, "trees")), _eps(num - _count(doc, "epsilon_count_num")))
    want = {}
    for k in members:
        if k == "model_format":  # 1.2 records the label column's name; older versions import as they were
            want[k] = "1.2" if "label" in doc else doc[k] if doc.get(k) in ("1.0", "1.1") else "1.1"
        elif k == "privacy":
            want[k] = want_priv
        elif k == "noise_scale":
            want[k] = scale
        elif k == "domain_from_rows":  # written only when set
            if k in doc:
                want[k] = True
        elif k in doc:
            want[k] = doc[k]
    check_views(doc, want)


def decode_learner_blob(blob):
    """The learner model BLOB (sql/model-format.md): checks it in the C decoder's order (magic, size,
    version, declared length, checksum, then the sections) and returns its facts and the learner's
    payload. Raises ModelError with the C decoder's wording."""
    if len(blob) < 8 or blob[:8] != b"RDTMODEL":
        raise ModelError("not an rdt model")
    if len(blob) < _HEADER_BYTES + _CHECKSUM_BYTES:
        raise ModelError("model is truncated")
    version, flags, total, n_sections, reserved = struct.unpack_from("<I16xIQII", blob, 8)
    if version >> 16 != 1 or version & 0xFFFF < 1:  # a flipped bit is a checksum error, whatever the field reads
        if hashlib.blake2b(blob[:-_CHECKSUM_BYTES], digest_size=32).digest() != blob[-_CHECKSUM_BYTES:]:
            raise ModelError("model checksum mismatch (corrupted or edited)")
        raise ModelError("unsupported model format version %d.%d for a learner model" % (version >> 16, version & 0xFFFF))
    if total != len(blob):
        raise ModelError("model is truncated or has trailing bytes (corrupted or edited)")
    body = blob[:-_CHECKSUM_BYTES]
    # BLAKE2b-256 without a key: libsodium's crypto_generichash (model-format.md, "Checksum").
    if hashlib.blake2b(body, digest_size=32).digest() != blob[-_CHECKSUM_BYTES:]:
        raise ModelError("model checksum mismatch (corrupted or edited)")
    if reserved != 0:
        raise ModelError("invalid model: reserved header field is not 0")
    if not flags & _FLAG_LEARNER:
        raise ModelError("invalid model: the header does not mark a learner model")
    if flags & ~(_FLAG_LEARNER | _FLAG_SEEDED | _FLAG_NONPRIVATE | _FLAG_SIGNED | _FLAG_DOMAIN_FROM_ROWS):
        raise ModelError("invalid model: unknown header flags")
    signed = 1 if flags & _FLAG_SIGNED else 0
    if not 3 + signed <= n_sections <= 5 + signed:
        raise ModelError("invalid model: wrong number of sections")
    r = _Bytes(body, _HEADER_BYTES)
    # PRIV, SCHM, then UNIT (unit facts) and LABL (1.2: the label column's name) when present, LRNR,
    # and SIGN when signed; LABL alone is optional (flags 0).
    sections = []
    for _ in range(n_sections):
        tag, sflags, length = r.take(4), r.u32(), r.u64()
        if length > r.left():
            raise ModelError("invalid model: section length out of bounds")
        if sflags != (0 if tag == b"LABL" else 1):
            raise ModelError("invalid model: section flags")
        sections.append((tag, r.pos, length))
        r.pos += length
    tags = [t for t, _, _ in sections]
    optional = [t for t in (b"UNIT", b"LABL") if t in tags]
    want = [b"PRIV", b"SCHM"] + optional + [b"LRNR"] + ([b"SIGN"] if signed else [])
    if b"LABL" in tags and version & 0xFFFF < 2:
        raise ModelError("invalid model: a label section in a model before format 1.2")
    for got, expected in zip(tags, want):
        if got != expected:
            raise ModelError("invalid model: unexpected section %r" % got.decode("latin-1"))
    if len(tags) != len(want):
        raise ModelError("invalid model: wrong number of sections")
    out = {"seeded": bool(flags & _FLAG_SEEDED), "domain_from_rows": bool(flags & _FLAG_DOMAIN_FROM_ROWS),
           "minor": version & 0xFFFF, "label": "label"}
    for tag, pos, length in sections:
        s = _Bytes(body, pos, pos + length)
        r.pos = pos + length
        if tag == b"PRIV":
            mech, relation, eps_num, den, sens = s.u32(), s.u32(), s.u64(), s.u32(), s.u32()
            out["private"] = mech == 5
            if (relation != 1 or den != 32 or sens != 0 or mech not in (0, 5)
                    or (eps_num == 0) == out["private"] or bool(flags & _FLAG_NONPRIVATE) == out["private"]):
                raise ModelError("invalid model: unknown privacy facts")
            out["eps_num"] = eps_num
        elif tag == b"SCHM":
            out["features"], out["classes"] = _schema(s)
        elif tag == b"UNIT":
            s.pos = s.end  # the privacy unit: ε accounting only; SCHM already holds the bounds used
        elif tag == b"LABL":
            out["label"] = s.text()  # the label column's name; prediction does not need it
        elif tag == b"LRNR":
            lid, task, tmin, tmax = s.u32(), s.u32(), s.f64(), s.f64()
            if lid not in _LEARNERS or task not in (1, 2) or (len(out["classes"]) == 0) != (task == 2):
                raise ModelError("invalid model: unknown learner or task")
            if task == 2 and not (math.isfinite(tmin) and math.isfinite(tmax) and tmin < tmax
                                  and math.isfinite(tmax - tmin)):
                raise ModelError("invalid model: unknown learner or task")
            out.update(learner=lid, regression=task == 2, target_min=tmin, target_max=tmax,
                       payload=_Bytes(body, s.pos, s.end))
            s.pos = s.end
        else:  # SIGN: the publisher's signature; rdt_verify checks it, this reader does not
            s.pos = s.end
        if s.pos != s.end:
            raise ModelError("invalid model: section has trailing bytes")
    if r.pos != len(body):
        raise ModelError("invalid model: trailing bytes after the sections")
    return out


def _learn_bins(f, bins):
    """rdt_learn_bins: a numeric feature's bins, or a categorical one's n_values + 1."""
    return bins if f["type"] == "numeric" else len(f["values"]) + 1


def _learn_bin(f, bins, x):
    """rdt_learn_bin (ext/core/learner.c): the public bin of a cleaned value."""
    if f["type"] != "numeric":
        n = len(f["values"])
        return int(x) if 0 <= x < n else n
    u = (x - f["min"]) / (f["max"] - f["min"]) * bins
    if not u >= 0:
        return 0
    return bins - 1 if u >= bins else int(u)


def _softmax(z):
    """rdt_learn_softmax: exp(z - max), summed in order, each divided by the sum."""
    m = z[0]
    for v in z[1:]:
        if v > m:
            m = v
    p, total = [], 0.0
    for v in z:
        e = math.exp(v - m)
        p.append(e)
        total += e
    return [v / total for v in p]


def _frequencies(counts, pseudo):
    """rdt_learn_frequencies: noisy counts clamped at 0, plus a pseudo-count, normalised."""
    p, total = [], 0.0
    for c in counts:
        v = (float(c) if c > 0 else 0.0) + pseudo
        p.append(v)
        total += v
    return [v / total if total > 0 else 1.0 / len(counts) for v in p]


def _finite(v):
    return not (math.isnan(v) or math.isinf(v))


class _Constant:
    """constant.c: the noisy class frequencies, or the noisy mean target."""

    def __init__(self, r, m, eps_num):
        self.m = m
        self.counts = [r.i64() for _ in range(len(m.classes) if not m.regression else 2)]
        if m.private:
            share = eps_num if not m.regression else eps_num // 2  # regression: count and sum, ε/2 each
            if share == 0:
                raise ModelError("invalid model: malformed learner state (constant: no budget)")
            scale = 1.0 / _eps(share)
        else:
            scale = 0.0
        self.pseudo = scale / 2

    def predict(self, xs):
        m = self.m
        if not m.regression:
            return _frequencies(self.counts, self.pseudo)
        n, total = float(self.counts[0]), float(self.counts[1]) / (1 << 16)
        top, bottom = total + self.pseudo * 0.5, (n if n > 0 else 0.0) + self.pseudo
        if bottom != 0:
            mean = top / bottom
        else:  # C's division: 0/0 is NaN, x/0 an infinity of x's sign
            mean = math.nan if top == 0 else math.copysign(math.inf, top)
        if math.isnan(mean):
            mean = 0.5
        mean = 0.0 if mean < 0 else 1.0 if mean > 1 else mean
        out = m.target_min + mean * (m.target_max - m.target_min)
        if out > m.target_max:
            out = m.target_max
        if out < m.target_min:
            out = m.target_min
        return [out]


class _NaiveBayes:
    """naive_bayes.c: payload versions 1-4 (contract 6, 6b), and 5 (6c: a readout chosen on the rows,
    then version 1-4); predict as nb_predict with nb_prepare's
    log-probabilities ("bayes") or the fitted scores ("moments", versions 3 and 4)."""

    def __init__(self, r, m, eps_num):
        version = r.u32()
        if version == 5:
            # contract 6c: the readout was chosen on the training rows with eps_readout (num // 20
            # when private), then a version 1-4 payload for the rest of the budget
            eps_readout = r.u64()
            if eps_readout != (eps_num // 20 if m.private else 0) or (m.private and eps_readout == 0):
                raise ModelError("invalid model: malformed learner state (naive_bayes)")
            eps_num -= eps_readout
            version = r.u32()
        self.bins = r.u32()
        moments = version in (3, 4)
        if version not in (1, 2, 3, 4):
            raise ModelError("invalid model: malformed learner state (naive_bayes payload version %d)" % version)
        self.fine = r.u32() if version in (2, 4) else 0
        private, ec, et, C, d = r.u32(), r.u64(), r.u64(), r.u32(), r.u32()
        features = m.features
        ok = (2 <= self.bins <= 1024 and private == int(m.private) and C == len(m.classes) and C >= 1
              and d == len(features) and not m.regression)
        if version in (2, 4):
            ok = ok and self.fine in (96, 48, 24, 12, 6) and self.fine % self.bins == 0
        derived = False
        if ok and private:
            # contract 3c (nb_split_derived): a row count's share with "auto" bins, the rest to the
            # tables, class counts derived; or contract 3 (nb_split, older models)
            row = 0 if d == 0 else (eps_num // (4 * (d + 1)) if self.fine else 0)
            tables = 0 if d == 0 else eps_num - row
            if d == 0:
                row = eps_num
            if d > 0 and ec == row and et == tables and et > 0 and (self.fine == 0 or ec > 0):
                derived = True
            else:
                per = eps_num // (d + 1)  # nb_split: the tables get d * per, the class counts the rest
                ok = ec == eps_num - per * d and et == per * d and ec > 0 and (d == 0 or et > 0)
        elif ok:
            ok = ec == 0 and et == 0
        if not ok:
            raise ModelError("invalid model: malformed learner state (naive_bayes)")
        self.C, self.features = C, features
        self.n_bins = [_learn_bins(f, self.bins) for f in features]
        self.offset, total = [], C
        for nb in self.n_bins:
            self.offset.append(total)
            total += C * nb
        if total > (1 << 26) or (moments and total > (1 << 20)) or r.left() < total * 8 * (2 if moments else 1):
            raise ModelError("invalid model: malformed learner state (naive_bayes)")
        counts = [r.i64() for _ in range(total)]
        self.w = None
        if moments:
            self.w = [r.f64() for _ in range(total)]
            if not all(_finite(v) and abs(v) <= 1e9 for v in self.w):
                raise ModelError("invalid model: malformed learner state (naive_bayes scores)")
        # nb_prepare: half the noise scales as pseudo-counts (1 without noise)
        a_class = a_table = 1.0
        if private:
            if d:
                a_table = 0.5 * d / _eps(et)
            a_class = a_table if derived else 0.5 / _eps(ec)
            if not (a_class > 0 and math.isfinite(a_class)):
                a_class = 1.0
            if not (a_table > 0 and math.isfinite(a_table)):
                a_table = 1.0
        logp = [0.0] * total
        n_total = 0.0
        for k in range(C):
            n_total += float(counts[k]) if counts[k] > 0 else 0.0
        for k in range(C):
            n = float(counts[k]) if counts[k] > 0 else 0.0
            logp[k] = math.log((n + a_class) / (n_total + C * a_class))
        for f in range(d):
            B = self.n_bins[f]
            for k in range(C):
                row = self.offset[f] + k * B
                s = 0.0
                for b in range(B):
                    s += float(counts[row + b]) if counts[row + b] > 0 else 0.0
                for b in range(B):
                    n = float(counts[row + b]) if counts[row + b] > 0 else 0.0
                    logp[row + b] = math.log((n + a_table) / (s + B * a_table))
        self.logp = logp

    def _bin(self, f, x):
        ft = self.features[f]
        if not self.fine or ft["type"] != "numeric":
            return _learn_bin(ft, self.bins, x)
        return _learn_bin(ft, self.fine, x) // (self.fine // self.bins)

    def predict(self, xs):
        table = self.w if self.w is not None else self.logp
        z = []
        for k in range(self.C):
            v = table[k]
            for f in range(len(self.features)):
                v += table[self.offset[f] + k * self.n_bins[f] + self._bin(f, xs[f])]
            z.append(v)
        return _softmax(z)


class _Boost:
    """boost.c: intercept plus one score per (feature, bin, class); softmax, or the clamped sum."""

    def __init__(self, r, m, eps_num):
        bins, self.rounds, lr = r.u32(), r.u32(), r.f64()
        # bit 24: a two-class model whose visits released class 1's gradient sums only (boost.c 3b)
        self.fine, self.bins, one_gradient = (bins >> 16) & 0xFF, bins & 0xFFFF, bins >> 24
        if (one_gradient > 1 or (one_gradient and (m.regression or len(m.classes) != 2))
                or not 2 <= self.bins <= 255 or (self.fine and (self.fine not in (120, 60, 30, 15) or self.fine % self.bins))
                or not 1 <= self.rounds <= 4 or not 0 < lr <= 10):
            raise ModelError("invalid model: malformed learner state (boost)")
        self.m, self.features = m, m.features
        self.nk = len(m.classes) if not m.regression else 1
        self.n_bins = [_learn_bins(f, self.bins) for f in self.features]
        self.off, total = [], 0
        for nb in self.n_bins:
            self.off.append(total)
            total += nb
        if r.left() < (total * self.nk + self.nk) * 8:
            raise ModelError("invalid model: malformed learner state (boost)")
        self.intercept = [r.f64() for _ in range(self.nk)]
        self.scores = [r.f64() for _ in range(total * self.nk)]

        def score_ok(v):
            return _finite(v) and -1e6 <= v <= 1e6
        if not all(score_ok(v) for v in self.scores) or not all(
                score_ok(v) if not m.regression else 0 <= v <= 1 for v in self.intercept):
            raise ModelError("invalid model: malformed learner state (boost scores)")

    def _bin(self, f, x):
        ft = self.features[f]
        b = _learn_bin(ft, self.fine if self.fine else self.bins, x)
        return b // (self.fine // self.bins) if self.fine and ft["type"] == "numeric" else b

    def predict(self, xs):
        nk = self.nk
        out = list(self.intercept)
        for f in range(len(self.features)):
            at = (self.off[f] + self._bin(f, xs[f])) * nk
            for k in range(nk):
                out[k] += self.scores[at + k]
        if not self.m.regression:
            return _softmax(out)
        lo, hi = self.m.target_min, self.m.target_max
        u = out[0]
        u = 0.0 if u < 0 else 1.0 if u > 1 else u
        v = lo + u * (hi - lo)
        return [hi if v > hi else v]


class _PrivateTree:
    """private_tree.c: a complete tree on public bins; the leaf's smoothed class frequencies."""

    def __init__(self, r, m, eps_num):
        version, self.bins, depth, self.depth_eff, private = r.u32(), r.u32(), r.u32(), r.u32(), r.u32()
        el, ef, C, d = r.u64(), r.u64(), r.u32(), r.u32()
        features = m.features
        if (version not in (1, 2) or not 2 <= self.bins <= 64 or depth > 8 or self.depth_eff > 8
                or private != int(m.private) or C != len(m.classes) or C < 1 or d != len(features) or m.regression):
            raise ModelError("invalid model: malformed learner state (private_tree)")
        self.features, self.C = features, C
        n_cand = [(len(f["values"]) + 1 if len(f["values"]) + 1 >= 2 else 0) if f["type"] != "numeric"
                  else self.bins - 1 for f in features]
        used = (depth or self.depth_eff or 1) if sum(n_cand) else 0  # pt_alloc's rule
        if used != self.depth_eff:
            raise ModelError("invalid model: malformed learner state (private_tree depth)")
        if private:
            split_from = eps_num if depth else eps_num - eps_num // 20  # "auto": ε/20 paid the row count
            per = split_from // (2 * self.depth_eff) if self.depth_eff else 0
            if not (el == per and ef == split_from - per * self.depth_eff and ef > 0 and (self.depth_eff == 0 or el > 0)):
                raise ModelError("invalid model: malformed learner state (private_tree budget)")
        elif el or ef:
            raise ModelError("invalid model: malformed learner state (private_tree budget)")
        ni, nl = (1 << self.depth_eff) - 1, 1 << self.depth_eff
        if r.left() < (ni + nl * C) * 8:
            raise ModelError("invalid model: malformed learner state (private_tree)")
        self.split = []
        for _ in range(ni):
            f, t = r.u32(), r.u32()
            if f >= d or t >= n_cand[f]:
                raise ModelError("invalid model: malformed learner state (private_tree split)")
            self.split.append((f, t))
        leaf = [r.i64() for _ in range(nl * C)]
        a = 1.0
        if private:
            a = 0.5 / _eps(ef)
            if not (a > 0 and math.isfinite(a)):
                a = 1.0
        self.proba = [_frequencies(leaf[j * C:(j + 1) * C], a) for j in range(nl)]

    def predict(self, xs):
        node = 0
        for _ in range(self.depth_eff):
            f, t = self.split[node]
            ft = self.features[f]
            b = _learn_bin(ft, self.bins, xs[f])
            left = b == t if ft["type"] != "numeric" else b <= t
            node = 2 * node + 1 if left else 2 * node + 2
        return self.proba[node - ((1 << self.depth_eff) - 1)]


class _Forest:
    """random_trees (id 4) and matrix_forest (id 7): the payload is a whole forest BLOB (an RDT forest
    of complete binary trees, or a matrix forest of multiway trees: model-format.md). The learner
    predicts the forest's class probabilities (forest.c forest_eval: with the threshold vote the
    learners' forests use, the mean of the voting trees' leaf distributions); rdt_predict takes
    their argmax."""

    def __init__(self, r, m, eps_num, lid):
        blob = r.take(r.left())
        if len(blob) < 8 or blob[:8] != b"RDTMODEL":
            raise ModelError("invalid model: malformed learner state (its forest is not an rdt model)")
        if len(blob) < _HEADER_BYTES + _CHECKSUM_BYTES:
            raise ModelError("invalid model: malformed learner state (its forest is truncated)")
        version, flags, total, n_sections = struct.unpack_from("<I16xIQI", blob, 8)
        if version >> 16 != 1 or total != len(blob) or flags & _FLAG_LEARNER:
            raise ModelError("invalid model: malformed learner state (its forest's header)")
        body = blob[:-_CHECKSUM_BYTES]
        if hashlib.blake2b(body, digest_size=32).digest() != blob[-_CHECKSUM_BYTES:]:
            raise ModelError("invalid model: malformed learner state (its forest's checksum mismatch)")
        matrix = lid == 7
        self.C = C = len(m.classes)
        rd = _Bytes(body, _HEADER_BYTES)
        seen = set()
        self.kept = None
        mech = eps = None
        for _ in range(n_sections):
            tag, _sflags, length = rd.take(4), rd.u32(), rd.u64()
            if length > rd.left():
                raise ModelError("invalid model: malformed learner state (a forest section's length)")
            s = _Bytes(body, rd.pos, rd.pos + length)
            rd.pos += length
            if tag in seen:
                raise ModelError("invalid model: malformed learner state (a repeated forest section)")
            seen.add(tag)
            if tag == b"PRIV":
                mech, relation, eps, den, _sens = s.u32(), s.u32(), s.u64(), s.u32(), s.u32()
                if mech not in ((3, 0) if matrix else (1, 0)) or relation != 1 or den != 32 or (mech != 0) != (eps != 0):
                    raise ModelError("invalid model: malformed learner state (the forest's privacy facts)")
            elif tag == b"SCHM":
                self.features, classes = _schema(s)
                if [f["name"] for f in self.features] != [f["name"] for f in m.features] or len(classes) != C:
                    raise ModelError("invalid model: malformed learner state (the forest's schema)")
            elif tag == b"FRST":
                (algo, layout, self.trees, self.depth, self.vote, _splits, _cat, task, _rho, _cand, _part, _tmin,
                 _tmax, auto_depth, self.eps_count, _rows) = struct.unpack("<7IIdIIddIQq", s.take(84))
                if (algo, layout) != ((3, 2) if matrix else (1, 1)) or task != 1 or not 1 <= self.trees <= 1024 \
                        or not 1 <= self.depth <= 30 or self.vote not in (1, 2, 3, 4) or auto_depth not in (0, 1):
                    raise ModelError("invalid model: malformed learner state (the forest's parameters)")
                if not auto_depth and self.eps_count:
                    raise ModelError("invalid model: malformed learner state (the forest's parameters)")
                if self.vote not in (2, 3):  # the learners' forests vote by threshold (forest_learner.c)
                    raise ModelError("this reader predicts with learner forests that vote by threshold, not vote %d"
                                     % self.vote)
            elif tag == b"MTRX" and matrix:
                self.bins = s.u32()
                s.take(4 + 4 * 8)  # strategy, the strategies' expected errors
                self.expected_variance = s.f64()
                if not 2 <= self.bins <= 1024 or not (self.expected_variance >= 0 and math.isfinite(self.expected_variance)):
                    raise ModelError("invalid model: malformed learner state (the matrix section)")
                s.pos = s.end  # the measured tables: how the counts were released, not needed to predict
            elif tag == b"NODE":
                self._nodes(s, matrix)
            elif tag == b"LEAF":
                if s.u32() != 1 or s.left() != self.n_leaves_all * C * 8:
                    raise ModelError("invalid model: malformed learner state (the forest's leaf table)")
                self.counts = [s.i64() for _ in range(self.n_leaves_all * C)]
            elif tag == b"KEPT":
                share, n = s.f64(), s.u32()
                kept = [s.u32() for _ in range(n)]
                if not 0 < share < 1 or not 1 <= n <= self.trees or any(
                        t >= self.trees or (i and t <= kept[i - 1]) for i, t in enumerate(kept)):
                    raise ModelError("invalid model: malformed learner state (the forest's voting trees)")
                self.kept = kept
            elif tag in (b"UNIT", b"CELL", b"SIGN"):
                s.pos = s.end  # ε accounting, the exact table for batch answers, a signature: not for predict
            else:
                raise ModelError("invalid model: malformed learner state (forest section %r)" % tag.decode("latin-1"))
            if s.pos != s.end:
                raise ModelError("invalid model: malformed learner state (a forest section's trailing bytes)")
        if not {b"PRIV", b"SCHM", b"FRST", b"NODE", b"LEAF"} <= seen or (matrix and b"MTRX" not in seen):
            raise ModelError("invalid model: malformed learner state (the forest lacks a section)")
        # rdt_forest_leaf_scale: the noise scale of a leaf counter (0 without noise)
        if mech == 0:
            scale = 0.0
        elif matrix:
            scale = math.sqrt(self.expected_variance / 2)
        else:
            if self.eps_count >= eps:
                raise ModelError("invalid model: malformed learner state (the forest's budget)")
            scale = self.trees / _eps(eps - self.eps_count)
        self._prepare(scale)

    def _nodes(self, s, matrix):
        if not matrix:
            n_internal = (1 << self.depth) - 1
            if s.left() != self.trees * n_internal * 16:
                raise ModelError("invalid model: malformed learner state (the forest's node table)")
            self.nodes = []
            for _ in range(self.trees * n_internal):
                feature, kind, raw = s.u32(), s.u32(), s.take(8)
                value = struct.unpack("<d", raw)[0]
                if kind != 0 and feature >= len(self.features) or kind > 3:
                    raise ModelError("invalid model: malformed learner state (a forest node)")
                self.nodes.append((kind, feature, struct.unpack("<Q", raw)[0] if kind == 3 else value))
            self.n_leaves_all = self.trees << self.depth
            return
        # multiway (matrix.c): per tree u32 n, then n (feature, next); children of an internal node are
        # the domain(feature) nodes from `next`, a leaf's `next` its index among its tree's leaves
        domain = [self.bins if f["type"] == "numeric" else len(f["values"]) for f in self.features]
        self.mnodes, self.leaf_start, leaves = [], [], 0
        for _ in range(self.trees):
            n = s.u32()
            if n == 0 or n > s.left() // 8:
                raise ModelError("invalid model: malformed learner state (the forest's node table)")
            tree = [(s.u32(), s.u32()) for _ in range(n)]
            leaf_no = 0
            for i, (feature, nxt) in enumerate(tree):
                if feature == 0xFFFFFFFF:
                    if nxt != leaf_no:
                        raise ModelError("invalid model: malformed learner state (a forest leaf)")
                    leaf_no += 1
                elif feature >= len(domain) or nxt <= i or nxt + domain[feature] > n:
                    raise ModelError("invalid model: malformed learner state (a forest node)")
            self.mnodes.append(tree)
            self.leaf_start.append(leaves)
            leaves += leaf_no
        self.domain, self.n_leaves_all = domain, leaves

    def _prepare(self, scale):
        """rdt_forest_prepare: leaf distributions with a pseudo-count of half the noise scale (the
        threshold vote averages them; leaf votes are for the majority vote only)."""
        C, pseudo = self.C, scale / 2
        self.theta = []
        for at in range(0, self.n_leaves_all * C, C):
            n = self.counts[at:at + C]
            total = 0.0
            for c in range(C):
                if n[c] > 0:
                    total += float(n[c])
            if total <= 0:
                self.theta.append([1.0 / C] * C)
                continue
            self.theta.append([((float(n[c]) if n[c] > 0 else 0.0) + pseudo) / (total + C * pseudo) for c in range(C)])

    def _leaf(self, t, xs):
        if hasattr(self, "mnodes"):
            tree, i = self.mnodes[t], 0
            while tree[i][0] != 0xFFFFFFFF:
                feature, nxt = tree[i]
                f, d, x = self.features[feature], self.domain[feature], xs[feature]
                if f["type"] != "numeric":
                    b = int(x) if 0 <= x < d else 0
                else:
                    u = (x - f["min"]) / (f["max"] - f["min"]) * d
                    b = 0 if not u >= 0 else d - 1 if u >= d else int(u)
                i = nxt + b
            return self.leaf_start[t] + tree[i][1]
        base, idx = t * ((1 << self.depth) - 1), 0
        for _ in range(self.depth):
            kind, feature, value = self.nodes[base + idx]
            x = xs[feature]
            left = True if kind == 0 else x < value if kind == 1 else x == value if kind == 2 else _member(value, int(x))
            idx = 2 * idx + 2 - (1 if left else 0)
        return t * (1 << self.depth) + idx - ((1 << self.depth) - 1)

    def predict(self, xs):
        C = self.C
        theta_sum = [0.0] * C
        for t in (self.kept if self.kept is not None else range(self.trees)):
            th = self.theta[self._leaf(t, xs)]
            for c in range(C):
                theta_sum[c] += th[c]
        voting = len(self.kept) if self.kept is not None else self.trees
        return [v / voting for v in theta_sum]


_PREDICTORS = {1: _Constant, 2: _NaiveBayes, 3: _Boost, 6: _PrivateTree,
               4: lambda r, m, e: _Forest(r, m, e, 4), 7: lambda r, m, e: _Forest(r, m, e, 7)}


class LearnerModel:
    """A learner model from its export (the "model_hex" member) or its BLOB."""

    def __init__(self, doc=None, blob=None):
        if blob is None:
            if doc.get("format") != "rdt-model-json" or doc.get("format_version") != 1:
                raise ModelError("not an rdt model export (format rdt-model-json, version 1)")
            hexed = doc.get("model_hex")
            if not isinstance(hexed, str) or not hexed or len(hexed) % 2 or not re.fullmatch(r"[0-9a-f]*", hexed):
                raise ModelError("\"model_hex\" must be the model as lowercase hexadecimal")
            blob = bytes.fromhex(hexed)
        facts = decode_learner_blob(blob)
        if doc is not None:  # the readable members are views of the BLOB (sql_export.c, export_learned)
            check_views(doc, {
                "format": "rdt-model-json", "format_version": 1, "model_format": "1.%d" % facts["minor"],
                "learner": _LEARNERS[facts["learner"]], "task": "regression" if facts["regression"] else "classification",
                "epsilon": _eps(facts["eps_num"]) if facts["private"] else None,
                "classes": facts["classes"], "features": facts["features"], "model_hex": doc["model_hex"],
                **({"label": facts["label"]} if facts["label"] != "label" else {})})
        self.features, self.classes = facts["features"], facts["classes"]
        self.regression, self.private = facts["regression"], facts["private"]
        self.target_min, self.target_max = facts["target_min"], facts["target_max"]
        self.codes = feature_codes(self.features)
        self.learner = _LEARNERS[facts["learner"]]
        r, lid, eps_num = facts["payload"], facts["learner"], facts["eps_num"]
        self.chosen = self.learner
        if lid == 5:  # auto.c: chosen id, picked id, n^, s, gain, the constant's ε share, [the guard's sensitivity,] the chosen payload
            chosen, picked, n_hat, snr, gain, eps_k = r.u32(), r.u32(), r.f64(), r.f64(), r.f64(), r.u64()
            # bit 31 of the picked id: the guard's sensitivity follows (auto.c step 6); 1 before it.
            # bit 30: no guard, the validation rows trained the pick (step 4a: only where n^ eps / 100 < 19)
            sensitivity = r.f64() if picked & 0x80000000 else 1.0
            unguarded, has_sensitivity = bool(picked & 0x40000000), bool(picked & 0x80000000)
            # bit 29: the facts step 3's classification rule read follow (its clause, which candidates were
            # there, the matrix forest's rows per cell and noise sd, the tree's depth and leaves)
            if picked & 0x20000000 and not _auto_why_consistent(
                    (r.u32(), r.u32(), r.f64(), r.f64(), r.f64(), r.f64()), picked & 0x1FFFFFFF, snr,
                    len(facts["features"]), len(facts["classes"] or []), has_sensitivity, self.regression):
                raise ModelError("invalid model: malformed learner state (auto)")
            picked &= 0x1FFFFFFF
            if (not 0 <= sensitivity <= 1 or (not self.regression and sensitivity != 1) or chosen not in _LEARNERS or chosen == 5 or (picked and (picked not in _LEARNERS or picked == 5))
                    or eps_k != eps_num // 20 or not _finite(n_hat)
                    or not (_finite(snr) or (not self.private and snr == math.inf))
                    or math.isinf(gain)
                    or (unguarded and (not has_sensitivity or not self.private or self.regression or gain != 0 or chosen != picked or picked == 1
                                       or n_hat * math.ldexp(eps_num, -32) * 0.01 >= 19))):
                raise ModelError("invalid model: malformed learner state (auto)")
            if self.private:
                # the constant fallback has ε/20; any pick (the constant the rule picked too) the rest
                eps_num = eps_k if chosen == 1 and picked != 1 else eps_num - eps_k
            lid = chosen
            self.chosen = _LEARNERS[chosen]
        if lid not in _PREDICTORS:
            raise ModelError("this reader does not predict with the learner %s" % _LEARNERS[lid])
        self.impl = _PREDICTORS[lid](r, self, eps_num)
        if r.left() != 0:
            raise ModelError("invalid model: malformed learner state (trailing bytes)")

    def predict(self, row):
        out = self.impl.predict(clean_row(self.features, self.codes, row))
        if self.regression:
            return out[0]
        best = 0  # ties: the first class listed (rdt_predict)
        for k in range(1, len(out)):
            if out[k] > out[best]:
                best = k
        return self.classes[best]


def _auto_rule_clause(has, m_rows, m_sd, depth, leaves, snr, d, k):
    """auto.c's step 3 for classification: the clause (1-4 (a)-(d), 5 naive Bayes, 6 the fallback) the
    facts give."""
    if has & 1 and m_rows >= 1 and m_rows >= m_sd:
        return 1
    two_d = 2 * (depth if has & 2 else 0)
    if has & 4 and snr >= 42 and d <= two_d:
        return 2
    if has & 2 and leaves >= k and (d > two_d or k <= 2):
        return 3
    if has & 4 and snr >= 42:
        return 4
    return 5 if has & 8 else 6


def _auto_why_consistent(why, picked, snr, d, k, has_sensitivity, regression):
    """A stored reason must be a classification model's with the guard's flag, finite, and its clause the
    rule's on its facts and the learner it names the one picked (auto.c why_consistent)."""
    clause, has, m_rows, m_sd, depth, leaves = why
    numbers = (m_rows, m_sd, depth, leaves)
    if regression or not has_sensitivity or has & ~15 or not all(_finite(v) and v >= 0 for v in numbers):
        return False
    if (not has & 1 and (m_rows or m_sd)) or (not has & 2 and (depth or leaves)):
        return False
    if _auto_rule_clause(has, m_rows, m_sd, depth, leaves, snr, d, k) != clause:
        return False
    # learner ids: 7 matrix_forest, 3 boost, 6 private_tree, 2 naive_bayes; the fallback: tree, boost, matrix, random trees
    return picked in {1: (7,), 2: (3,), 3: (6,), 4: (3,), 5: (2,), 6: (6, 3, 7, 4)}[clause]


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


def load(path):
    """The model of an export: a learner model when it carries "model_hex", else a forest."""
    with open(path) as f:
        doc = parse_export(f.read())
    if not isinstance(doc, dict):
        raise ModelError("not an rdt model export (format rdt-model-json, version 1)")
    if "model_hex" in doc:
        return LearnerModel(doc)
    try:
        return Model(doc)
    except (KeyError, TypeError, IndexError) as e:
        raise ModelError("not a complete rdt model export (%s: %s)" % (type(e).__name__, e)) from None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        model = load(sys.argv[1])
    except (ValueError, OSError) as e:  # ModelError is a ValueError
        sys.exit("rdt_reader: %s" % e)
    with open(sys.argv[2], newline="") as f:
        reader = csv.reader(f)
        header = next(reader, [])
        names = [ft["name"] for ft in model.features]
        missing = [n for n in names if n not in header]
        if missing:
            sys.exit("rdt_reader: the rows' header lacks the feature%s %s" % ("s" if len(missing) > 1 else "",
                                                                             ", ".join(missing)))
        order = [header.index(n) for n in names]
        for row in reader:
            values = [row[i] if row[i] != "" else None for i in order]
            print(model.predict(values))


if __name__ == "__main__":
    main()

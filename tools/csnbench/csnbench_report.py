"""csnbench_report: reading csn's JSON Lines results, statistics, SVG plots, report.html and the
comparison of two runs. Python 3 standard library only (see DESIGN.md: plotting)."""

import html
import json
import math
import os
from itertools import combinations

SCHEMA = "csn-bench/1"
TOOLS = ("nettest", "pingpong", "logp", "threadtest", "pipeline", "linkmatrix")
# Statistics that are one value per repeat (or per run); the others are summaries of them.
PER_REPEAT = ("sample", "mean", "aggregate", "estimate")
TOPOLOGIES = ("Star", "Star2", "Chaos", "Chaos2", "Ring", "Ring2")


# ---------------------------------------------------------------------------------------------
# Reading and validating records


class SchemaError(ValueError):
    pass


_HEADER_KEYS = {
    "type": str, "schema": str, "tool": str, "flavour": str, "date": str, "library": str,
    "version": str, "commit": str, "transport": str, "nprocs": int, "hosts": list, "cpus": int,
    "kernel": str, "machine": str, "load": list, "command": list, "options": dict,
}
_MEAS_KEYS = {
    "type": str, "tool": str, "test": str, "metric": str, "size": (int, type(None)),
    "repeat": (int, type(None)), "rank": (int, type(None)), "pair": (list, type(None)),
    "threads": (int, type(None)), "value": (int, float, type(None)), "unit": str,
    "statistic": str,
}
_OPTIONAL = {"ci": list, "n": int, "flag": str, "run": int, "round": int}
_END_KEYS = {"type": str, "tool": str, "status": str, "elapsed_s": (int, float, type(None))}
_SUITE_KEYS = {"type": str, "schema": str, "date": str, "commit": str, "command": list,
               "quick": bool, "mpi": bool, "hosts": list, "tests": list, "cpus": int,
               "kernel": str, "load": list}


def _check_keys(rec, keys, optional, where):
    for k, t in keys.items():
        if k not in rec:
            raise SchemaError("%s: missing key '%s'" % (where, k))
        if isinstance(rec[k], bool) and t is not bool and bool not in (t if isinstance(t, tuple) else (t,)):
            raise SchemaError("%s: key '%s' is a boolean" % (where, k))
        if not isinstance(rec[k], t):
            raise SchemaError("%s: key '%s' has the wrong type (%s)" % (where, k, type(rec[k]).__name__))
    for k in rec:
        if k not in keys and k not in optional:
            raise SchemaError("%s: unknown key '%s'" % (where, k))
        if k in optional and k not in keys and not isinstance(rec[k], optional[k]):
            raise SchemaError("%s: key '%s' has the wrong type" % (where, k))


def validate_record(rec, where="record"):
    """Raises SchemaError when rec does not follow docs/results-jsonl.md."""
    if not isinstance(rec, dict) or "type" not in rec:
        raise SchemaError("%s: not an object with a type" % where)
    t = rec["type"]
    if t == "header":
        _check_keys(rec, _HEADER_KEYS, {"run": int, "round": int}, where)
        if rec["schema"] != SCHEMA:
            raise SchemaError("%s: schema '%s', expected '%s'" % (where, rec["schema"], SCHEMA))
        if rec["flavour"] not in ("csn", "mpi"):
            raise SchemaError("%s: flavour '%s'" % (where, rec["flavour"]))
        if rec["nprocs"] < 1 or not rec["hosts"] or len(rec["hosts"]) > rec["nprocs"]:
            raise SchemaError("%s: nprocs/hosts inconsistent" % where)
        if len(rec["load"]) != 3:
            raise SchemaError("%s: load must have 3 values" % where)
    elif t == "measurement":
        _check_keys(rec, _MEAS_KEYS, _OPTIONAL, where)
        if rec["tool"] not in TOOLS:
            raise SchemaError("%s: unknown tool '%s'" % (where, rec["tool"]))
        v = rec["value"]
        if v is None and "flag" not in rec:
            raise SchemaError("%s: null value without a flag" % where)
        if isinstance(v, float) and not math.isfinite(v):
            raise SchemaError("%s: value not finite" % where)
        if rec["pair"] is not None and (len(rec["pair"]) != 2 or not all(isinstance(x, int) for x in rec["pair"])):
            raise SchemaError("%s: pair must be two ranks" % where)
        if "ci" in rec and (len(rec["ci"]) != 2 or rec["ci"][0] > rec["ci"][1]):
            raise SchemaError("%s: ci must be [low, high]" % where)
        for k in ("size", "repeat", "rank", "threads"):
            if rec[k] is not None and (isinstance(rec[k], bool) or rec[k] < 0):
                raise SchemaError("%s: %s negative" % (where, k))
    elif t == "end":
        _check_keys(rec, _END_KEYS, {"run": int, "round": int, "flavour": str}, where)
        if rec["status"] not in ("ok", "error", "interrupted"):
            raise SchemaError("%s: status '%s'" % (where, rec["status"]))
    elif t == "suite":
        _check_keys(rec, _SUITE_KEYS, {"version": str, "interrupted": bool, "options": dict}, where)
    else:
        raise SchemaError("%s: unknown type '%s'" % (where, t))


def read_jsonl(path, validate=True):
    """The records of one JSON Lines file; a torn last line (a run that was stopped) is
    dropped, any other bad line raises SchemaError."""
    out = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            if i >= len(lines) - 2:
                break  # the last line of an interrupted run
            raise SchemaError("%s:%d: not JSON" % (path, i + 1))
        if validate:
            validate_record(rec, "%s:%d" % (path, i + 1))
        out.append(rec)
    return out


def validate_stream(records, where="file"):
    """A tool's file: one header first, measurements of that tool, at most one end last."""
    if not records or records[0]["type"] != "header":
        raise SchemaError("%s: the first record must be the header" % where)
    tool = records[0]["tool"]
    for i, r in enumerate(records[1:], 2):
        if r["type"] == "header":
            raise SchemaError("%s:%d: a second header" % (where, i))
        if r["tool"] != tool:
            raise SchemaError("%s:%d: tool %s in a %s file" % (where, i, r["tool"], tool))
        if r["type"] == "end" and i != len(records):
            raise SchemaError("%s:%d: records after the end record" % (where, i))


# ---------------------------------------------------------------------------------------------
# Statistics


def median(v):
    s = sorted(v)
    n = len(s)
    if n == 0:
        return float("nan")
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def mann_whitney(a, b):
    """Two-sided Mann-Whitney U test of two samples: (U, p). Exact (all splits of the pooled
    ranks) when the split count is small, else the normal approximation with tie correction.
    p is 1.0 when either sample is empty."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return float("nan"), 1.0
    pooled = sorted([(x, 0) for x in a] + [(x, 1) for x in b])
    ranks = [0.0] * len(pooled)
    i = 0
    ties = 0.0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        r = (i + j) / 2.0 + 1
        for k in range(i, j + 1):
            ranks[k] = r
        t = j - i + 1
        ties += t ** 3 - t
        i = j + 1
    r1 = sum(r for r, (_, g) in zip(ranks, pooled) if g == 0)
    u1 = r1 - n1 * (n1 + 1) / 2.0
    mu = n1 * n2 / 2.0
    if math.comb(n1 + n2, n1) <= 20000:
        dev = abs(u1 - mu)
        count = 0
        total = 0
        for idx in combinations(range(n1 + n2), n1):
            s = sum(ranks[k] for k in idx) - n1 * (n1 + 1) / 2.0
            total += 1
            if abs(s - mu) >= dev - 1e-9:
                count += 1
        return u1, count / total
    n = n1 + n2
    var = n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:
        return u1, 1.0
    z = (abs(u1 - mu) - 0.5) / math.sqrt(var)
    p = math.erfc(max(z, 0) / math.sqrt(2))
    return u1, min(1.0, p)


def min_p(n1, n2):
    """The smallest two-sided p the exact test can give for these sample sizes."""
    if n1 == 0 or n2 == 0:
        return 1.0
    return min(1.0, 2.0 / math.comb(n1 + n2, n1))


# ---------------------------------------------------------------------------------------------
# A results directory as series


def key_of(r, flavour):
    pair = tuple(r["pair"]) if r["pair"] is not None else None
    return (r["tool"], flavour, r["test"], r["metric"], r["size"], r["threads"], r["rank"], pair)


def key_str(k):
    tool, flavour, test, metric, size, threads, rank, pair = k
    s = "%s/%s %s %s" % (tool, flavour, test, metric)
    if size is not None:
        s += " size=%s" % fmt_size(size)
    if threads is not None:
        s += " threads=%d" % threads
    if rank is not None:
        s += " rank=%d" % rank
    if pair is not None:
        s += " pair=%d->%d" % pair
    return s


class Results:
    """All records of a results directory, grouped: per key the per-repeat values, the unit,
    and the flags seen."""

    def __init__(self, records):
        self.records = records
        self.suite = next((r for r in records if r["type"] == "suite"), None)
        self.headers = [r for r in records if r["type"] == "header"]
        self.ends = [r for r in records if r["type"] == "end"]
        self.values = {}
        self.units = {}
        self.flags = {}
        self.ci = {}
        flavour = "csn"
        for r in records:
            if r["type"] == "header":
                flavour = r["flavour"]
                continue
            if r["type"] != "measurement" or r["statistic"] not in PER_REPEAT:
                continue
            k = key_of(r, flavour)
            self.units[k] = r["unit"]
            if "ci" in r:
                self.ci[k] = r["ci"]
            if r.get("flag"):
                self.flags.setdefault(k, []).append(r["flag"])
                continue
            self.values.setdefault(k, []).append(float(r["value"]))

    @classmethod
    def load(cls, d):
        path = os.path.join(d, "results.jsonl") if os.path.isdir(d) else d
        return cls(read_jsonl(path))

    def flavours(self, tool):
        return sorted({h["flavour"] for h in self.headers if h["tool"] == tool})

    def series(self, tool, flavour, test, metric, threads=None, rank=None, pair=None):
        """[(size, median, min, max)] ascending by size."""
        out = []
        for k, v in self.values.items():
            if k[:4] == (tool, flavour, test, metric) and k[5] == threads and k[6] == rank and k[7] == pair and v:
                out.append((k[4], median(v), min(v), max(v)))
        return sorted(out, key=lambda p: (p[0] is None, p[0] or 0))

    def get(self, tool, flavour, test, metric, size=None, threads=None, rank=None, pair=None):
        return self.values.get((tool, flavour, test, metric, size, threads, rank, pair), [])

    def first_header(self, tool, flavour="csn"):
        return next((h for h in self.headers if h["tool"] == tool and h["flavour"] == flavour), None)


# ---------------------------------------------------------------------------------------------
# LogGP prediction


def loggp_params(res, flavour="csn"):
    """The usable LogGP parameters of a run (microseconds, us/B), or None. L may be flagged
    (negative at small sizes): the prediction then uses only the sum L + o_s + o_r, which is
    the measured half round trip at the smallest size and always usable."""
    def one(metric, size_any=True):
        for k, v in res.values.items():
            if k[0] == "logp" and k[1] == flavour and k[2] == "loggp" and k[3] == metric and v:
                return median(v), k[4]
        return None, None
    os_, s0 = one("o_s")
    or_, _ = one("o_r")
    G, _ = one("G")
    g0, _ = one("g")
    L, _ = one("L")
    half = None
    sizes = []
    for k, v in res.values.items():
        if k[:4] == ("logp", flavour, "size", "half_rtt") and v:
            sizes.append((k[4], median(v)))
    sizes.sort()
    if sizes:
        s0, half = sizes[0]
    if half is None or G is None:
        return None
    return {"L": L, "o_s": os_ or 0.0, "o_r": or_ or 0.0, "g": g0 or 0.0, "G": G, "s0": s0 or 0,
            "lso": half}


def predict_latency(p, s):
    """One-way time of an s-byte message: o_s + L + o_r (at the smallest size) + (s - s0) G."""
    return p["lso"] + max(0, s - p["s0"]) * p["G"]


def predict_gap(p, s):
    """Time per message in a stream: max(g, o_s, o_r) + (s - 1) G."""
    return max(p["g"], p["o_s"], p["o_r"]) + max(0, s - 1) * p["G"]


def predict_bw(p, s):
    return s / predict_gap(p, s) if s > 0 else float("nan")  # bytes/us = MB/s


def predict_nettest(p, test, np_, s):
    """Total MB/s (2 L N(P) / T) of one nettest procedure, first-order LogGP: the busiest node
    sends and receives its n messages one gap apart; the unidirectional procedures wait for
    the answer (two one-way times)."""
    links = {"Star": np_ - 1, "Star2": np_ - 1, "Chaos": np_ * (np_ - 1) // 2,
             "Chaos2": np_ * (np_ - 1) // 2, "Ring": np_ if np_ > 2 else 1,
             "Ring2": np_ if np_ > 2 else 1}[test]
    n = {"Star": np_ - 1, "Star2": np_ - 1, "Chaos": np_ - 1, "Chaos2": np_ - 1,
         "Ring": 1, "Ring2": 2 if np_ > 2 else 1}[test]
    m = predict_latency(p, s)
    gap = predict_gap(p, s)
    if test in ("Star2", "Chaos2", "Ring2"):
        t = m + (n - 1) * gap
    elif test == "Ring":
        t = 2 * m
    else:
        t = 2 * m + (n - 1) * gap
    return 2.0 * s * links / t if t > 0 else float("nan")


# ---------------------------------------------------------------------------------------------
# Formatting


def fmt_size(s):
    if s is None:
        return "-"
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if s >= (1 << shift) and s % (1 << shift) == 0:
            return "%d%s" % (s >> shift, unit)
    return str(s)


def fmt_num(v):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 1e5:
        return "%.0f" % v
    if a >= 100:
        return "%.1f" % v
    if a >= 1:
        return "%.2f" % v
    return "%.3g" % v


def esc(s):
    return html.escape(str(s), quote=True)


# ---------------------------------------------------------------------------------------------
# SVG plots (hand-written: no plotting dependency, see DESIGN.md)

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
          "#17becf", "#7f7f7f", "#bcbd22"]


def _ticks_log(lo, hi, base2):
    out = []
    if base2:
        e = math.floor(math.log2(lo))
        step = max(1, int(math.ceil((math.log2(hi) - e) / 8)))
        while 2 ** e <= hi * 1.0001:
            if 2 ** e >= lo / 1.0001:
                out.append((2 ** e, fmt_size(int(2 ** e)) if e >= 0 else "%g" % 2 ** e))
            e += step
    else:
        e = math.floor(math.log10(lo))
        # decades; with fewer than three in range also 2 and 5 times them
        mults = (1,) if math.log10(hi / lo) >= 2 else (1, 2, 5)
        while 10 ** e <= hi * 1.0001:
            for mu in mults:
                v = mu * 10 ** e
                if lo / 1.0001 <= v <= hi * 1.0001:
                    out.append((v, ("%g" % v) if 1e-3 <= v < 1e6 else "%de%d" % (mu, e)))
            e += 1
    return out


def _ticks_lin(lo, hi):
    span = hi - lo if hi > lo else 1.0
    raw = span / 5
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 5, 10) if m * mag >= raw), default=mag)
    v = math.ceil(lo / step) * step
    out = []
    while v <= hi + 1e-9 * span:
        out.append((v, fmt_num(v)))
        v += step
    return out


def svg_plot(series, title, xlabel, ylabel, xlog=True, ylog=False, width=640, height=360,
             xbase2=True):
    """series: dicts {name, points [(x, y, lo, hi)], color, dash, marker}. Points with a
    non-positive coordinate on a log axis or a non-finite y are left out."""
    ml, mr, mt, mb = 70, 170, 30, 45
    pw, ph = width - ml - mr, height - mt - mb
    xs, ys = [], []
    clean = []
    for s in series:
        pts = []
        for p in s["points"]:
            x, y = p[0], p[1]
            lo = p[2] if len(p) > 2 and p[2] is not None else y
            hi = p[3] if len(p) > 3 and p[3] is not None else y
            if x is None or y is None or not all(math.isfinite(v) for v in (x, y, lo, hi)):
                continue
            if (xlog and x <= 0) or (ylog and (y <= 0 or lo <= 0)):
                continue
            pts.append((x, y, lo, hi))
            xs.append(x)
            ys.extend((lo, hi))
        pts.sort()
        clean.append((s, pts))
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
           'font-family="sans-serif" font-size="11">' % (width, height, width, height),
           '<rect width="100%%" height="100%%" fill="white"/>',
           '<text x="%d" y="18" font-size="13" font-weight="bold">%s</text>' % (ml, esc(title))]
    if not xs:
        out.append('<text x="%d" y="%d">no data</text></svg>' % (ml + 10, mt + ph // 2))
        return "\n".join(out)
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    if xlog:
        x0, x1 = (x0 / 1.5, x1 * 1.5) if x0 == x1 else (x0, x1)
    elif x0 == x1:
        x0, x1 = x0 - 1, x1 + 1
    if ylog:
        y0, y1 = y0 / 1.3, y1 * 1.3
    else:
        y0 = min(0.0, y0)
        y1 = y1 * 1.08 if y1 > 0 else 1.0
        if y0 == y1:
            y1 = y0 + 1

    def fx(x):
        if xlog:
            return ml + pw * (math.log(x) - math.log(x0)) / (math.log(x1) - math.log(x0) or 1)
        return ml + pw * (x - x0) / (x1 - x0)

    def fy(y):
        if ylog:
            return mt + ph - ph * (math.log(y) - math.log(y0)) / (math.log(y1) - math.log(y0) or 1)
        return mt + ph - ph * (y - y0) / (y1 - y0)

    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>' % (ml, mt, pw, ph))
    xt = _ticks_log(x0, x1, xbase2) if xlog else _ticks_lin(x0, x1)
    for v, lab in xt:
        X = fx(v)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (X, mt, X, mt + ph))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (X, mt + ph + 14, esc(lab)))
    yt = _ticks_log(y0, y1, False) if ylog else _ticks_lin(y0, y1)
    for v, lab in yt:
        Y = fy(v)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (ml, Y, ml + pw, Y))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (ml - 4, Y + 4, esc(lab)))
    out.append('<text x="%d" y="%d" text-anchor="middle">%s</text>' % (ml + pw // 2, height - 8, esc(xlabel)))
    out.append('<text transform="translate(14,%d) rotate(-90)" text-anchor="middle">%s</text>'
               % (mt + ph // 2, esc(ylabel)))
    ly = mt + 6
    for i, (s, pts) in enumerate(clean):
        color = s.get("color") or COLORS[i % len(COLORS)]
        dash = s.get("dash", "")
        da = ' stroke-dasharray="%s"' % dash if dash else ""
        if pts:
            path = " ".join("%s%.1f,%.1f" % ("M" if j == 0 else "L", fx(x), fy(y)) for j, (x, y, _, _) in enumerate(pts))
            out.append('<path d="%s" fill="none" stroke="%s" stroke-width="1.6"%s/>' % (path, color, da))
            for x, y, lo, hi in pts:
                X = fx(x)
                if hi > lo:
                    out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>' % (X, fy(lo), X, fy(hi), color))
                if s.get("marker", True):
                    out.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>' % (X, fy(y), color))
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                   % (ml + pw + 8, ly, ml + pw + 28, ly, color, da))
        out.append('<text x="%d" y="%d">%s</text>' % (ml + pw + 32, ly + 4, esc(s["name"])))
        ly += 15
    out.append("</svg>")
    return "\n".join(out)


def svg_heatmap(matrix, labels, title, unit="MB/s"):
    n = len(labels)
    cell = max(28, min(60, 480 // max(n, 1)))
    ml, mt = 60, 40
    width, height = ml + cell * n + 90, mt + cell * n + 30
    vals = [v for row in matrix for v in row if v is not None and math.isfinite(v)]
    lo, hi = (min(vals), max(vals)) if vals else (0, 1)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="10">' % (width, height), '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="16" font-size="13" font-weight="bold">%s</text>' % (ml, esc(title)),
           '<text x="%d" y="32">sender (column) &#8594; receiver (row), %s</text>' % (ml, esc(unit))]
    for i in range(n):
        out.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (ml - 4, mt + cell * i + cell // 2 + 4, esc(labels[i])))
        out.append('<text x="%d" y="%d" text-anchor="middle">%s</text>' % (ml + cell * i + cell // 2, mt + cell * n + 14, esc(labels[i])))
        for j in range(n):
            v = matrix[i][j]
            x, y = ml + cell * j, mt + cell * i
            if v is None or not math.isfinite(v):
                out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#eee" stroke="white"/>' % (x, y, cell, cell))
                continue
            t = (v - lo) / (hi - lo) if hi > lo else 1.0
            # cold (low bandwidth) red, hot (high) blue: a bad link stands out
            r, g, b = int(215 - 180 * t), int(60 + 120 * t), int(50 + 170 * t)
            out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="rgb(%d,%d,%d)" stroke="white"><title>%s</title></rect>'
                       % (x, y, cell, cell, r, g, b, esc("%s -> %s: %s %s" % (labels[j], labels[i], fmt_num(v), unit))))
            if cell >= 36:
                out.append('<text x="%d" y="%d" text-anchor="middle" fill="white">%s</text>' % (x + cell // 2, y + cell // 2 + 4, esc(fmt_num(v))))
    out.append("</svg>")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# report.html

CSS = """body{font-family:sans-serif;max-width:1100px;margin:1em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1em}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right;font-size:12px}
th{background:#f3f3f3}td.l,th.l{text-align:left}.flag{color:#b00;font-weight:bold}.muted{color:#777}
h2{border-bottom:1px solid #ccc;margin-top:1.6em}figure{margin:.5em 0}.sig{background:#fde2e2}.same{color:#777}
nav a{margin-right:.8em}"""


class Page:
    def __init__(self, title):
        self.parts = []
        self.title = title
        self.nav = []

    def h2(self, ident, text):
        self.nav.append((ident, text))
        self.parts.append('<h2 id="%s">%s</h2>' % (esc(ident), esc(text)))

    def p(self, text, cls=None):
        self.parts.append('<p%s>%s</p>' % (' class="%s"' % cls if cls else "", text))

    def raw(self, s):
        self.parts.append(s)

    def table(self, head, rows, cls=None):
        h = "".join('<th%s>%s</th>' % (' class="l"' if i == 0 else "", esc(c)) for i, c in enumerate(head))
        body = []
        for row in rows:
            tr_cls = ""
            if isinstance(row, tuple) and len(row) == 2 and isinstance(row[1], str) and isinstance(row[0], list):
                row, tr_cls = row
            body.append('<tr%s>%s</tr>' % (' class="%s"' % tr_cls if tr_cls else "",
                        "".join('<td%s>%s</td>' % (' class="l"' if i == 0 else "", c) for i, c in enumerate(row))))
        self.parts.append('<table%s><tr>%s</tr>%s</table>' % (' class="%s"' % cls if cls else "", h, "".join(body)))

    def figure(self, svg, name, figdir=None):
        """Inlines the SVG (the page stays one file) and, with figdir, also writes it there."""
        if figdir:
            os.makedirs(figdir, exist_ok=True)
            with open(os.path.join(figdir, name + ".svg"), "w", encoding="utf-8") as f:
                f.write(svg)
        self.parts.append('<figure id="fig-%s">%s</figure>' % (esc(name), svg))

    def html(self):
        nav = " ".join('<a href="#%s">%s</a>' % (esc(i), esc(t)) for i, t in self.nav)
        return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>%s</title>'
                '<style>%s</style></head><body><h1>%s</h1><nav>%s</nav>\n%s\n</body></html>\n'
                % (esc(self.title), CSS, esc(self.title), nav, "\n".join(self.parts)))


def cell(med, lo, hi):
    if med is None or not math.isfinite(med):
        return "-"
    if lo is not None and hi is not None and hi > lo:
        return '%s <span class="muted">[%s&#8211;%s]</span>' % (fmt_num(med), fmt_num(lo), fmt_num(hi))
    return fmt_num(med)


def sv(vals):
    return (median(vals), min(vals), max(vals)) if vals else (None, None, None)


def _provenance(page, res):
    page.h2("provenance", "Provenance")
    s = res.suite
    rows = []
    if s:
        rows += [["command", esc(" ".join(s["command"]))], ["date", esc(s["date"])],
                 ["commit", esc(s["commit"])], ["hosts", esc(", ".join(s["hosts"]))],
                 ["CPUs, kernel", esc("%d, %s" % (s["cpus"], s["kernel"]))],
                 ["load at start", esc(" ".join(fmt_num(x) for x in s["load"]))],
                 ["mode", "quick" if s["quick"] else "full"], ["MPI twins", "yes" if s["mpi"] else "no"]]
        if s.get("interrupted"):
            rows.append(["status", '<span class="flag">interrupted: the report shows what was measured</span>'])
    page.table(["", "value"], rows)
    seen = {}
    for h in res.headers:
        k = (h["tool"], h["flavour"], h["library"], h["transport"], h["nprocs"],
             ",".join(sorted(set(h["hosts"]))), " ".join(h["command"][1:]), h["commit"])
        seen[k] = seen.get(k, 0) + 1
    trows = [[esc(x) for x in k[:4]] + [str(k[4]), esc(k[5]), esc(k[6]), esc(k[7]), str(n)] for k, n in seen.items()]
    page.table(["tool", "flavour", "library", "transport", "procs", "hosts", "arguments", "built from", "runs"], trows)
    bad = [e for e in res.ends if e["status"] != "ok"]
    for e in bad:
        page.p('<span class="flag">%s (%s) ended with status %s</span>' % (esc(e["tool"]), esc(e.get("flavour", "?")), esc(e["status"])))


def _nettest(page, res, figdir, loggp):
    flav = res.flavours("nettest")
    if not flav:
        return
    page.h2("nettest", "nettest: throughput per topology")
    h = res.first_header("nettest", flav[0])
    np_ = h["nprocs"] if h else 2
    page.p("Total throughput (2 L N(P) / T, MB/s = 10<sup>6</sup> B/s) of each procedure against the "
           "message size, %d processes; median of the repeats with the min&#8211;max range. "
           "Dashed: the MPI twin; dotted: the LogGP prediction from logp." % np_)
    for f in flav:
        sizes = sorted({k[4] for k in res.values if k[0] == "nettest" and k[1] == f and k[3] == "rate_total"})
        rows = []
        for s in sizes:
            row = [fmt_size(s)]
            for t in TOPOLOGIES:
                row.append(cell(*sv(res.get("nettest", f, t, "rate_total", s))))
            rows.append(row)
        page.p("<b>%s</b>: total MB/s per size (the seed's table, one row per size; median "
               "[min&#8211;max] of the repeats)" % esc(f))
        page.table(["size"] + list(TOPOLOGIES), rows)
    series = []
    for i, t in enumerate(TOPOLOGIES):
        for f in flav:
            pts = res.series("nettest", f, t, "rate_total")
            if pts:
                series.append({"name": "%s %s" % (t, f), "points": pts, "color": COLORS[i],
                               "dash": "6,3" if f == "mpi" else ""})
        if loggp and "csn" in flav:
            pts = [(s, predict_nettest(loggp, t, np_, s)) for s, _, _, _ in res.series("nettest", "csn", t, "rate_total")]
            series.append({"name": "%s LogGP" % t, "points": pts, "color": COLORS[i], "dash": "2,3", "marker": False})
    page.figure(svg_plot(series, "nettest: total throughput", "message size (bytes)", "MB/s",
                         ylog=True, width=760, height=420), "nettest-throughput", figdir)


def _pingpong(page, res, figdir, loggp):
    flav = res.flavours("pingpong")
    if not flav:
        return
    page.h2("pingpong", "pingpong: latency and bandwidth")
    rows = []
    sizes = sorted({k[4] for k in res.values if k[0] == "pingpong"})
    for s in sizes:
        row = [fmt_size(s)]
        for f in flav:
            for t, m in (("lat", "latency"), ("bw", "bandwidth"), ("bibw", "bandwidth")):
                row.append(cell(*sv(res.get("pingpong", f, t, m, s))))
        rows.append(row)
    head = ["size"]
    for f in flav:
        head += ["%s lat us" % f, "%s bw MB/s" % f, "%s bibw MB/s" % f]
    page.table(head, rows)
    lat = []
    for i, f in enumerate(flav):
        lat.append({"name": "latency %s" % f, "points": res.series("pingpong", f, "lat", "latency"),
                    "color": COLORS[0], "dash": "6,3" if f == "mpi" else ""})
    if loggp:
        lat.append({"name": "LogGP prediction", "points": [(s, predict_latency(loggp, s)) for s, _, _, _ in res.series("pingpong", "csn", "lat", "latency")],
                    "color": COLORS[3], "dash": "2,3", "marker": False})
    page.figure(svg_plot(lat, "pingpong: one-way latency (half round trip)", "message size (bytes)", "us",
                         ylog=True), "pingpong-latency", figdir)
    bw = []
    for f in flav:
        bw.append({"name": "uni %s" % f, "points": res.series("pingpong", f, "bw", "bandwidth"), "color": COLORS[0], "dash": "6,3" if f == "mpi" else ""})
        bw.append({"name": "bidir %s" % f, "points": res.series("pingpong", f, "bibw", "bandwidth"), "color": COLORS[2], "dash": "6,3" if f == "mpi" else ""})
    if loggp:
        bw.append({"name": "uni LogGP", "points": [(s, predict_bw(loggp, s)) for s, _, _, _ in res.series("pingpong", "csn", "bw", "bandwidth")],
                   "color": COLORS[3], "dash": "2,3", "marker": False})
    page.figure(svg_plot(bw, "pingpong: bandwidth", "message size (bytes)", "MB/s", ylog=True),
                "pingpong-bandwidth", figdir)


def mpi_ratios(res):
    """[(tool, test, metric, size, threads, csn median, mpi median, ratio csn/mpi, higher_is_better)]"""
    out = []
    for k, v in sorted(res.values.items(), key=lambda kv: str(kv[0])):
        tool, f, test, metric, size, threads, rank, pair = k
        if f != "csn" or rank is not None or pair is not None or not v:
            continue
        w = res.values.get((tool, "mpi", test, metric, size, threads, rank, pair))
        if not w:
            continue
        unit = res.units.get(k, "")
        better_high = unit in ("MB/s", "msg/s")
        a, b = median(v), median(w)
        out.append((tool, test, metric, size, threads, a, b, a / b if b else float("nan"), better_high, unit))
    return out


def _ratios(page, res, figdir):
    rat = mpi_ratios(res)
    if not rat:
        return
    page.h2("ratios", "csn against the MPI twin")
    page.p("Ratio of the medians csn / MPI. For rates above 1 means csn is faster; for times "
           "(us, s) below 1 means csn is faster.")
    rows = []
    for tool, test, metric, size, threads, a, b, r, hi, unit in rat:
        good = (r > 1) if hi else (r < 1)
        rows.append(["%s %s %s" % (esc(tool), esc(test), esc(metric)), fmt_size(size),
                     str(threads) if threads else "-", fmt_num(a), fmt_num(b), esc(unit),
                     '<b>%s</b>' % fmt_num(r) if good else fmt_num(r)])
    page.table(["measurement", "size", "threads", "csn", "MPI", "unit", "csn/MPI"], rows)
    series = []
    for i, (t, m, name) in enumerate((("lat", "latency", "pingpong latency"), ("bw", "bandwidth", "pingpong bw"),
                                      ("bibw", "bandwidth", "pingpong bibw"))):
        pts = [(s, a / b) for (tool, test, metric, s, th, a, b, r, hi, u) in rat
               if tool == "pingpong" and test == t and metric == m and s and b]
        series.append({"name": name, "points": pts, "color": COLORS[i]})
    pts = [(s, a / b) for (tool, test, metric, s, th, a, b, r, hi, u) in rat
           if tool == "nettest" and test == "Chaos2" and metric == "rate_total" and s and b]
    series.append({"name": "nettest Chaos2", "points": pts, "color": COLORS[3]})
    page.figure(svg_plot(series, "csn / MPI (median ratio)", "message size (bytes)", "ratio", ylog=True),
                "mpi-ratio", figdir)


def _logp(page, res, figdir):
    flav = res.flavours("logp")
    if not flav:
        return
    page.h2("logp", "logp: LogGP parameters")
    page.p("Per message size, microseconds, with the 95% interval. A figure that is negative, "
           "not a number or outside its own interval is not shown as a value: it is flagged.")
    for f in flav:
        sizes = sorted({k[4] for k in list(res.values) + list(res.flags) if k[0] == "logp" and k[1] == f and k[2] == "size"})
        rows = []
        for s in sizes:
            row = [fmt_size(s)]
            for m in ("half_rtt", "o_s", "o_r", "g", "L"):
                k = ("logp", f, "size", m, s, None, None, None)
                if k in res.flags:
                    row.append('<span class="flag">%s</span>' % esc(res.flags[k][0]))
                else:
                    v = res.values.get(k)
                    ci = res.ci.get(k)
                    row.append(cell(median(v), ci[0], ci[1]) if v and ci else cell(*sv(v or [])))
            rows.append(row)
        page.p("<b>%s</b>" % esc(f))
        page.table(["size", "rtt/2", "o_s", "o_r", "g", "L"], rows)
        summ = []
        for m, unit in (("L", "us"), ("o_s", "us"), ("o_r", "us"), ("g", "us"), ("G", "us/B")):
            k = next((k for k in list(res.values) + list(res.flags) if k[:4] == ("logp", f, "loggp", m)), None)
            if k is None:
                continue
            if k in res.flags:
                summ.append([m, '<span class="flag">%s</span>' % esc(res.flags[k][0]), unit])
            else:
                summ.append([m, fmt_num(median(res.values[k])), unit])
        page.table(["LogGP", "value", "unit"], summ)
        series = []
        for i, m in enumerate(("o_s", "o_r", "g", "L")):
            pts = [(s, med, res.ci.get(("logp", f, "size", m, s, None, None, None), [None, None])[0],
                    res.ci.get(("logp", f, "size", m, s, None, None, None), [None, None])[1])
                   for s, med, _, _ in res.series("logp", f, "size", m)]
            series.append({"name": m, "points": pts, "color": COLORS[i]})
        page.figure(svg_plot(series, "logp parameters (%s)" % f, "message size (bytes)", "us", ylog=True),
                    "logp-params-%s" % f, figdir)


def residuals(res, loggp):
    """[(what, size, measured, predicted, residual %)] of the LogGP prediction."""
    out = []
    if not loggp:
        return out
    for s, med, _, _ in res.series("pingpong", "csn", "lat", "latency"):
        p = predict_latency(loggp, s)
        out.append(("pingpong latency us", s, med, p, 100.0 * (med - p) / p if p else float("nan")))
    for s, med, _, _ in res.series("pingpong", "csn", "bw", "bandwidth"):
        p = predict_bw(loggp, s)
        out.append(("pingpong bandwidth MB/s", s, med, p, 100.0 * (med - p) / p if p else float("nan")))
    h = res.first_header("nettest", "csn")
    if h:
        for t in TOPOLOGIES:
            for s, med, _, _ in res.series("nettest", "csn", t, "rate_total"):
                p = predict_nettest(loggp, t, h["nprocs"], s)
                out.append(("nettest %s MB/s" % t, s, med, p, 100.0 * (med - p) / p if p else float("nan")))
    return out


def _validation(page, res, loggp):
    page.h2("loggp-validation", "LogGP self-validation")
    if not loggp:
        page.p('<span class="flag">no usable LogGP parameters (logp not run, or G flagged): no prediction</span>')
        return
    page.p("From logp's parameters (L + o_s + o_r = %s us at %s B, g = %s us, G = %s us/B, i.e. "
           "1/G = %s MB/s) the model predicts a one-way time o_s + L + o_r + (s &#8722; s0) G, a "
           "stream gap max(g, o_s, o_r) + (s &#8722; 1) G, and for nettest the busiest node's n "
           "messages one gap apart. The plots above draw the prediction dotted; the residuals "
           "(measured &#8722; predicted) / predicted:" % (
               fmt_num(loggp["lso"]), fmt_size(loggp["s0"]), fmt_num(loggp["g"]), fmt_num(loggp["G"]),
               fmt_num(1.0 / loggp["G"]) if loggp["G"] > 0 else "-"))
    rows = [[esc(w), fmt_size(s), fmt_num(m), fmt_num(p), "%+.0f%%" % r if math.isfinite(r) else "-"]
            for w, s, m, p, r in residuals(res, loggp)]
    page.table(["measurement", "size", "measured", "predicted", "residual"], rows, cls="residuals")


def _threadtest(page, res, figdir):
    flav = res.flavours("threadtest")
    if not flav:
        return
    page.h2("threadtest", "threadtest: rate against threads")
    sizes = sorted({k[4] for k in res.values if k[0] == "threadtest"})
    rows = []
    for f in flav:
        for s in sizes:
            for th in sorted({k[5] for k in res.values if k[0] == "threadtest" and k[4] == s}):
                rows.append([esc(f), fmt_size(s), str(th),
                             cell(*sv(res.get("threadtest", f, "pingpong", "latency", s, th))),
                             cell(*sv(res.get("threadtest", f, "stream", "msg_rate", s, th)))])
    page.table(["flavour", "size", "threads", "latency us (mean per thread)", "messages/s (all threads)"], rows)
    series = []
    for i, s in enumerate(sizes):
        for f in flav:
            pts = []
            for th in sorted({k[5] for k in res.values if k[0] == "threadtest" and k[4] == s and k[1] == f}):
                v = res.get("threadtest", f, "stream", "msg_rate", s, th)
                if v:
                    pts.append((th, median(v), min(v), max(v)))
            series.append({"name": "%s B %s" % (fmt_size(s), f), "points": pts, "color": COLORS[i], "dash": "6,3" if f == "mpi" else ""})
    page.figure(svg_plot(series, "threadtest: aggregate message rate", "threads per process", "messages/s",
                         ylog=True), "threadtest-rate", figdir)


def _pipeline(page, res, figdir):
    flav = res.flavours("pipeline")
    if not flav:
        return
    page.h2("pipeline", "pipeline: all-to-all throughput")
    rows = []
    series = []
    for f in flav:
        for m in ("rate_all", "rate_between"):
            pts = res.series("pipeline", f, "alltoall", m)
            for s, med, lo, hi in pts:
                rows.append([esc(f), esc(m), fmt_size(s), cell(med, lo, hi), str(len(res.get("pipeline", f, "alltoall", m, s)))])
            series.append({"name": "%s %s" % (m, f), "points": pts})
    page.table(["flavour", "figure", "block", "MB/s median [min&#8211;max]", "runs"], rows)
    page.figure(svg_plot(series, "pipeline: aggregate throughput", "block size (bytes)", "MB/s", ylog=False),
                "pipeline-throughput", figdir)


def link_matrix(res, flavour, test):
    h = res.first_header("linkmatrix", flavour)
    if not h:
        return None, None
    n = h["nprocs"]
    m = [[None] * n for _ in range(n)]
    for k, v in res.values.items():
        if k[0] == "linkmatrix" and k[1] == flavour and k[2] == test and k[7] is not None and v:
            snd, rcv = k[7]
            if rcv < n and snd < n:
                m[rcv][snd] = median(v)
    labels = ["%d %s" % (r, h["hosts"][r]) if r < len(h["hosts"]) and len(set(h["hosts"])) > 1 else str(r) for r in range(n)]
    return m, labels


def _linkmatrix(page, res, figdir):
    flav = res.flavours("linkmatrix")
    if not flav:
        return
    page.h2("linkmatrix", "The link matrix")
    page.p("Bandwidth of every ordered pair of ranks (row: receiver, column: sender), each pair "
           "alone and all pairs at once (all-to-all); a bad cable or port is a cold row or column.")
    for f in flav:
        for test, title in (("alone", "each pair alone"), ("loaded", "under the full all-to-all load")):
            m, labels = link_matrix(res, f, test)
            if m is None:
                continue
            rows = [[esc(labels[i])] + [fmt_num(v) if v is not None else "-" for v in m[i]] for i in range(len(m))]
            page.p("<b>%s, %s</b> (MB/s)" % (esc(f), esc(title)))
            page.table(["recv \\ send"] + labels, rows)
            page.figure(svg_heatmap(m, labels, "link matrix %s: %s" % (f, title)), "linkmatrix-%s-%s" % (f, test), figdir)


def write_report(resdir, figdir=None):
    """Writes resdir/report.html from resdir/results.jsonl; returns its path."""
    res = Results.load(resdir)
    loggp = loggp_params(res)
    title = "csn benchmark report"
    if res.suite:
        title += " %s" % res.suite["date"]
    page = Page(title)
    _provenance(page, res)
    _nettest(page, res, figdir, loggp)
    _pingpong(page, res, figdir, loggp)
    _ratios(page, res, figdir)
    _logp(page, res, figdir)
    if res.flavours("logp") or res.flavours("pingpong"):
        _validation(page, res, loggp)
    _threadtest(page, res, figdir)
    _pipeline(page, res, figdir)
    _linkmatrix(page, res, figdir)
    path = os.path.join(resdir, "report.html")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(page.html())
    os.replace(path + ".tmp", path)
    return path


# ---------------------------------------------------------------------------------------------
# compare


def compare(a, b, alpha=0.05):
    """Rows (key, unit, values A, values B, median ratio B/A, p, verdict) for every key both
    runs measured. verdict: 'same' (no difference beyond the spread), 'higher' or 'lower' (B
    against A, p < alpha), 'few' (too few repeats for the test to reach alpha)."""
    rows = []
    for k in sorted(set(a.values) & set(b.values), key=str):
        va, vb = a.values[k], b.values[k]
        if not va or not vb:
            continue
        ma, mb = median(va), median(vb)
        ratio = mb / ma if ma else float("nan")
        _, p = mann_whitney(va, vb)
        if min_p(len(va), len(vb)) >= alpha:
            verdict = "few"
        elif p < alpha and ma != mb:
            verdict = "higher" if mb > ma else "lower"
        else:
            verdict = "same"
        rows.append((k, a.units.get(k, ""), va, vb, ratio, p, verdict))
    return rows


def compare_text(rows, name_a, name_b):
    lines = ["csnbench compare: A = %s, B = %s" % (name_a, name_b),
             "ratio = median B / median A; p: two-sided Mann-Whitney U test on the per-repeat values;",
             "a difference is flagged (*) when p < 0.05; 'few': not enough repeats for the test", ""]
    lines.append("%-62s %8s %12s %12s %8s %7s  %s" % ("measurement", "unit", "median A", "median B", "B/A", "p", "verdict"))
    for k, unit, va, vb, ratio, p, verdict in rows:
        mark = "*" if verdict in ("higher", "lower") else " "
        lines.append("%-62s %8s %12s %12s %8s %7.3f %s%s" % (key_str(k)[:62], unit, fmt_num(median(va)), fmt_num(median(vb)),
                                                             fmt_num(ratio), p, mark, verdict))
    n = {v: sum(1 for r in rows if r[6] == v) for v in ("same", "higher", "lower", "few")}
    lines.append("")
    lines.append("%d measurements: %d differ (%d higher, %d lower in B), %d same within the spread, %d with too few repeats"
                 % (len(rows), n["higher"] + n["lower"], n["higher"], n["lower"], n["same"], n["few"]))
    return "\n".join(lines) + "\n"


def compare_html(rows, name_a, name_b, path):
    page = Page("csnbench compare")
    page.h2("compare", "A = %s, B = %s" % (name_a, name_b))
    n_diff = sum(1 for r in rows if r[6] in ("higher", "lower"))
    page.p("%d measurements in both runs; %d differ beyond the runs' own spread (two-sided "
           "Mann-Whitney U test on the per-repeat values, p &lt; 0.05). Ratio: median B / median A."
           % (len(rows), n_diff))
    trs = []
    for k, unit, va, vb, ratio, p, verdict in rows:
        trs.append(([esc(key_str(k)), esc(unit), cell(*sv(va)), cell(*sv(vb)), fmt_num(ratio),
                     "%.3f" % p, esc(verdict)], "sig" if verdict in ("higher", "lower") else ""))
    page.table(["measurement", "unit", "A median [min&#8211;max]", "B median [min&#8211;max]", "B/A", "p", "verdict"], trs)
    series = {}
    for k, unit, va, vb, ratio, p, verdict in rows:
        if k[4] and k[6] is None and k[7] is None and math.isfinite(ratio) and ratio > 0:
            name = "%s %s %s %s" % (k[0], k[1], k[2], k[3])
            series.setdefault(name, []).append((k[4], ratio))
    ss = [{"name": n[:24], "points": sorted(p)} for n, p in sorted(series.items()) if len(p) > 1][:10]
    page.figure(svg_plot(ss, "median B / median A", "message size (bytes)", "ratio", ylog=True, width=760), "compare-ratio")
    with open(path, "w", encoding="utf-8") as f:
        f.write(page.html())


# ---------------------------------------------------------------------------------------------
# Markdown summary (BENCHMARKS.md): csn against the MPI twin, per benchmark


def _md_table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def _md_cell(v):
    return fmt_num(median(v)) if v else "-"


def _md_ratio(a, b):
    return fmt_num(median(a) / median(b)) if a and b and median(b) else "-"


def markdown(res, figrel="figures"):
    """One short section per benchmark: csn, MPI and the csn/MPI ratio of the medians."""
    out = []
    has_mpi = any(h["flavour"] == "mpi" for h in res.headers)
    sizes = sorted({k[4] for k in res.values if k[0] == "pingpong"})
    if sizes:
        rows = []
        for s in sizes:
            row = [fmt_size(s)]
            for t, m in (("lat", "latency"), ("bw", "bandwidth"), ("bibw", "bandwidth")):
                a, b = res.get("pingpong", "csn", t, m, s), res.get("pingpong", "mpi", t, m, s)
                row += [_md_cell(a)] + ([_md_cell(b), _md_ratio(a, b)] if has_mpi else [])
            rows.append(row)
        head = ["size"]
        for n in ("latency us", "bw MB/s", "bibw MB/s"):
            head += ["csn " + n] + (["MPI", "csn/MPI"] if has_mpi else [])
        out.append("### pingpong\n\n" + _md_table(head, rows) +
                   "\n\n![latency](%s/pingpong-latency.svg) ![bandwidth](%s/pingpong-bandwidth.svg)" % (figrel, figrel))
    if res.flavours("nettest"):
        sizes = sorted({k[4] for k in res.values if k[0] == "nettest" and k[3] == "rate_total"})
        rows = []
        for s in sizes:
            row = [fmt_size(s)]
            for t in TOPOLOGIES:
                a, b = res.get("nettest", "csn", t, "rate_total", s), res.get("nettest", "mpi", t, "rate_total", s)
                row.append(_md_cell(a) + (" (%s)" % _md_ratio(a, b) if has_mpi else ""))
            rows.append(row)
        h = res.first_header("nettest")
        out.append("### nettest\n\nTotal MB/s per procedure, %d processes%s. nettest's own figure: the bytes "
                   "of one iteration over the slowest rank's mean time from leaving the barrier before it "
                   "to leaving the barrier after it (that first barrier and the payload check fall "
                   "outside).\n\n" % (
            h["nprocs"] if h else 0, "; in parentheses csn/MPI" if has_mpi else "") +
            _md_table(["size"] + list(TOPOLOGIES), rows) + "\n\n![nettest](%s/nettest-throughput.svg)" % figrel)
    if res.flavours("logp"):
        rows = []
        for m, unit in (("L", "us"), ("o_s", "us"), ("o_r", "us"), ("g", "us"), ("G", "us/B")):
            row = [m + " (" + unit + ")"]
            for f in ("csn", "mpi") if has_mpi else ("csn",):
                k = next((k for k in list(res.values) + list(res.flags) if k[:4] == ("logp", f, "loggp", m)), None)
                row.append("-" if k is None else ("flagged: " + res.flags[k][0]) if k in res.flags else fmt_num(median(res.values[k])))
            rows.append(row)
        p = loggp_params(res)
        text = "### logp\n\n" + _md_table(["LogGP", "csn"] + (["MPI"] if has_mpi else []), rows)
        if p:
            rr = residuals(res, p)
            lat = [abs(r) for w, s, m_, pr, r in rr if w.startswith("pingpong latency") and math.isfinite(r)]
            bw = [abs(r) for w, s, m_, pr, r in rr if w.startswith("pingpong bandwidth") and math.isfinite(r)]
            nt = [abs(r) for w, s, m_, pr, r in rr if w.startswith("nettest") and math.isfinite(r)]
            text += ("\n\nLogGP self-validation (csn), median |residual| of the prediction: pingpong latency "
                     "%s%%, pingpong bandwidth %s%%, nettest %s%% (report.html lists every point)."
                     % tuple(fmt_num(median(v)) if v else "-" for v in (lat, bw, nt)))
        out.append(text + "\n\n![logp](%s/logp-params-csn.svg)" % figrel)
    if res.flavours("threadtest"):
        rows = []
        for s in sorted({k[4] for k in res.values if k[0] == "threadtest"}):
            for th in sorted({k[5] for k in res.values if k[0] == "threadtest" and k[4] == s}):
                a, b = res.get("threadtest", "csn", "stream", "msg_rate", s, th), res.get("threadtest", "mpi", "stream", "msg_rate", s, th)
                la, lb = res.get("threadtest", "csn", "pingpong", "latency", s, th), res.get("threadtest", "mpi", "pingpong", "latency", s, th)
                rows.append([fmt_size(s), str(th), _md_cell(a)] + ([_md_cell(b), _md_ratio(a, b)] if has_mpi else []) +
                            [_md_cell(la)] + ([_md_cell(lb), _md_ratio(la, lb)] if has_mpi else []))
        out.append("### threadtest\n\n" + _md_table(["size", "threads", "csn msg/s"] + (["MPI", "csn/MPI"] if has_mpi else []) +
                                                   ["csn lat us"] + (["MPI", "csn/MPI"] if has_mpi else []), rows) +
                   "\n\n![threadtest](%s/threadtest-rate.svg)" % figrel)
    if res.flavours("pipeline"):
        rows = []
        for m in ("rate_all", "rate_between"):
            for s, med, lo, hi in res.series("pipeline", "csn", "alltoall", m):
                rows.append([m, fmt_size(s), "%s [%s-%s]" % (fmt_num(med), fmt_num(lo), fmt_num(hi))])
        h = res.first_header("pipeline")
        out.append("### pipeline\n\ncsn only (it forks csn processes), %d nodes, median [min-max] of the runs.\n\n"
                   % (h["nprocs"] if h else 0) + _md_table(["figure", "block", "MB/s"], rows) +
                   "\n\n![pipeline](%s/pipeline-throughput.svg)" % figrel)
    if res.flavours("linkmatrix"):
        rows = []
        for f in res.flavours("linkmatrix"):
            for t in ("alone", "loaded"):
                m, _ = link_matrix(res, f, t)
                vals = [v for row in (m or []) for v in row if v is not None]
                if vals:
                    rows.append([f, t, fmt_num(min(vals)), fmt_num(median(vals)), fmt_num(max(vals))])
        out.append("### linkmatrix\n\nPer-pair MB/s over all ordered pairs.\n\n" +
                   _md_table(["flavour", "pairs", "min", "median", "max"], rows) +
                   "\n\n![alone](%s/linkmatrix-csn-alone.svg) ![loaded](%s/linkmatrix-csn-loaded.svg)" % (figrel, figrel))
    return "\n\n".join(out) + "\n"

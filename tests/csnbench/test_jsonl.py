#!/usr/bin/env python3
"""test_jsonl: every benchmark (csn and, when built, its MPI twin) writes --jsonl records that
follow docs/results-jsonl.md; bad --jsonl arguments are one-line usage errors (exit 2).
usage: test_jsonl.py BUILD_DIR SOURCE_DIR"""
import os
import subprocess
import sys
import tempfile

build, src = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src, "tools", "csnbench"))
import csnbench_report as rep  # noqa: E402

CSNRUN = os.path.join(build, "tools/csnrun/csnrun")
RUNS = {
    "nettest": ("bench/nettest/nettest", 3, ["uK", "m1", "M4", "K2", "R2", "T20"]),
    "pingpong": ("bench/pingpong/pingpong", 2, ["--sizes", "0,8,64K", "--samples", "3", "--sample-ms", "1"]),
    "logp": ("bench/logp/logp", 2, ["-s", "8:1K", "-t", "0.01", "--lenient"]),
    "threadtest": ("bench/threadtest/threadtest", 2, ["--threads", "1,2", "--sizes", "8", "--time", "0.02"]),
    "pipeline": ("bench/pipeline/pipeline", 2, ["--nbuf", "8", "--bufsize", "4K"]),
    "linkmatrix": ("tools/csnbench/linkmatrix", 3, ["--size", "16K", "--iters", "2"]),
}
# What each tool must measure at least (test, metric).
MUST = {
    "nettest": {("Star", "rate_total"), ("Chaos2", "rate_total"), ("Ring2", "rate_local")},
    "pingpong": {("lat", "latency"), ("bw", "bandwidth"), ("bibw", "bandwidth")},
    "logp": {("size", "L"), ("size", "o_s"), ("size", "o_r"), ("size", "g"), ("loggp", "G")},
    "threadtest": {("pingpong", "latency"), ("stream", "msg_rate")},
    "pipeline": {("alltoall", "rate_all"), ("alltoall", "rate_node")},
    "linkmatrix": {("alone", "bandwidth"), ("loaded", "bandwidth")},
}
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
mpirun = next((p for p in ("/usr/bin/mpirun.openmpi", "/usr/bin/mpirun") if os.access(p, os.X_OK)), None)
failures = []
tmp = tempfile.mkdtemp(prefix="csn-jsonl-")


def check(tool, flavour, cmd, path):
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, timeout=120)
    if r.returncode != 0:
        failures.append("%s/%s: exit %d: %s" % (tool, flavour, r.returncode, r.stderr.strip()[-300:]))
        return
    try:
        recs = rep.read_jsonl(path)
        rep.validate_stream(recs, path)
    except rep.SchemaError as e:
        failures.append("%s/%s: %s" % (tool, flavour, e))
        return
    h = recs[0]
    if h["tool"] != tool or h["flavour"] != flavour:
        failures.append("%s/%s: header says %s/%s" % (tool, flavour, h["tool"], h["flavour"]))
    if recs[-1]["type"] != "end" or recs[-1]["status"] != "ok":
        failures.append("%s/%s: no ok end record" % (tool, flavour))
    got = {(m["test"], m["metric"]) for m in recs if m["type"] == "measurement"}
    if not MUST[tool] <= got:
        failures.append("%s/%s: missing %s" % (tool, flavour, sorted(MUST[tool] - got)))
    for m in recs:
        if m["type"] == "measurement" and m["value"] is not None and m["unit"] in ("MB/s", "msg/s") and m["value"] < 0:
            failures.append("%s/%s: negative rate %r" % (tool, flavour, m))
            break
    if tool == "logp":  # a negative or NaN parameter is flagged, never a plain value
        for m in recs:
            if m["type"] == "measurement" and m["metric"] in ("L", "o_s", "o_r", "g", "G"):
                v = m["value"]
                if (v is None or v < 0) and "flag" not in m:
                    failures.append("logp/%s: unflagged %r" % (flavour, m))
    print("%s/%s: %d records ok" % (tool, flavour, len(recs)))


for tool, (prog, np_, args) in RUNS.items():
    exe = os.path.join(build, prog)
    if not os.access(exe, os.X_OK):
        failures.append("%s not built" % exe)
        continue
    p = os.path.join(tmp, tool + "-csn.jsonl")
    check(tool, "csn", [CSNRUN, "-np", str(np_), exe] + args + ["--jsonl", p], p)
    # Sanitizer builds (CSNBENCH_TEST_NO_MPI=1): Open MPI's own leaks and races are not ours.
    if tool != "pipeline" and mpirun and os.access(exe + "-mpi", os.X_OK) and os.environ.get("CSNBENCH_TEST_NO_MPI") != "1":
        p = os.path.join(tmp, tool + "-mpi.jsonl")
        # Open MPI itself leaks at exit: no LeakSanitizer for the twins of an ASan build.
        check(tool, "mpi", [mpirun, "--oversubscribe", "-x", "ASAN_OPTIONS=detect_leaks=0", "-np", str(np_), exe + "-mpi"]
              + args + ["--jsonl", p], p)
    # Usage errors: --jsonl without a file, and a file that cannot be written.
    for bad in (["--jsonl"], ["--jsonl", os.path.join(tmp, "no/such/dir/x.jsonl")]):
        r = subprocess.run([CSNRUN, "-np", str(np_), exe] + args[:0] + bad, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, env=env, timeout=60)
        lines = [ln for ln in r.stderr.splitlines() if "jsonl" in ln]
        if r.returncode != 2 or len(lines) != 1:
            failures.append("%s %s: exit %d, stderr %r (want 2 and one line naming --jsonl)" % (tool, bad, r.returncode, r.stderr[-300:]))

# The validator itself must reject what the schema forbids.
good = {"type": "measurement", "tool": "pingpong", "test": "lat", "metric": "latency", "size": 8, "repeat": 1,
        "rank": None, "pair": None, "threads": None, "value": 1.0, "unit": "us", "statistic": "sample"}
rep.validate_record(good)
for change in ({"value": None}, {"size": -1}, {"tool": "other"}, {"extra": 1}, {"pair": [1]}, {"ci": [2, 1]},
               {"repeat": True}):
    bad = dict(good, **change)
    try:
        rep.validate_record(bad)
        failures.append("validator accepted %r" % change)
    except rep.SchemaError:
        pass
for f in os.listdir(tmp):
    os.unlink(os.path.join(tmp, f))
os.rmdir(tmp)
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)

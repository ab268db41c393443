#!/usr/bin/env python3
"""test_csnweb: csn-web as an HTTP server and as a CGI program. Bad requests (odd host names,
shell metacharacters, huge numbers, unknown fields and tests, wrong methods, oversized bodies,
path tricks, a second run while one is going) get an HTTP error and a message, and nothing is
started; a good request starts one quick run, whose progress streams as server-sent events
(also after a browser went away mid-run) and whose report is served when it is done.
usage: test_csnweb.py BUILD_DIR SOURCE_DIR"""
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

build, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
web = os.path.join(src, "tools", "csn-web", "csn-web")
tmp = tempfile.mkdtemp(prefix="csnweb-test-")
runs = os.path.join(tmp, "runs")
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


srv = subprocess.Popen([sys.executable, web, "--port", "0", "--dir", runs, "--build", build],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
line = srv.stdout.readline()
m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
if not m:
    srv.kill()
    print("FAIL: csn-web did not start: %r" % line)
    sys.exit(1)
port = int(m.group(1))


def req(method, path, body=None, headers=None, read=True):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    h = dict(headers or {})
    if body is not None and "Content-Type" not in h:
        h["Content-Type"] = "application/x-www-form-urlencoded"
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read() if read else None
    c.close()
    return r.status, dict(r.getheaders()), data


def form(**kw):
    return urllib.parse.urlencode(kw, doseq=True)


def nruns():
    return len([d for d in os.listdir(runs) if not d.startswith(".")]) if os.path.isdir(runs) else 0


try:
    st, _, body = req("GET", "/")
    expect(st == 200 and b'<form method="post" action="run">' in body, "start page with the form")
    # Bad requests: refused with a status and a message, nothing started.
    bad = [
        (form(hosts="a;reboot", tests="pingpong"), 400, "bad host name"),
        (form(hosts="$(id)", tests="pingpong"), 400, "bad host name"),
        (form(hosts="`id`", tests="pingpong"), 400, "bad host name"),
        (form(hosts="-oProxyCommand=x", tests="pingpong"), 400, "bad host name"),
        (form(hosts="a" * 300), 400, "bad host name"),
        (form(hosts=",".join("h%d" % i for i in range(40))), 400, "at most"),
        (form(tests="pingpong;ls"), 400, "unknown test"),
        (form(tests="../../bin/sh"), 400, "unknown test"),
        (form(maxsize="99999999999999999999"), 400, "bad largest size"),
        (form(maxsize="4096M"), 400, "out of range"),
        (form(maxsize="1M && ls"), 400, "bad largest size"),
        (form(mode="forever"), 400, "mode must be"),
        (form(np="100000"), 400, "unknown field"),
        (form(mpi="yes please"), 400, "mpi must be"),
        ("hosts=%ff%fe", 400, "not valid"),
        ("x" * 5000, 413, "larger than"),
    ]
    for body, want, msg in bad:
        st, _, out = req("POST", "/run", body)
        expect(st == want and msg.encode() in out, "POST %r: %d (want %d, %r)" % (body[:40], st, want, msg))
    st, _, _ = req("POST", "/run", form(tests="pingpong"), {"Content-Type": "text/plain"})
    expect(st == 415, "wrong content type: %d" % st)
    st, _, _ = req("GET", "/run")
    expect(st == 405, "GET /run: %d" % st)
    st, _, _ = req("DELETE", "/")
    expect(st == 405, "DELETE /: %d" % st)
    for p in ("/runs/../../etc/passwd", "/runs/20260101-000000-1/report.html", "/nope", "/runs/x/",
              "/" + "a" * 1000):
        st, _, _ = req("GET", p)
        expect(st in (400, 404), "GET %s: %d" % (p[:40], st))
    expect(nruns() == 0, "no run was started by a bad request")

    # A good request starts one quick run; a second one while it goes is refused.
    st, h, _ = req("POST", "/run", form(tests=["pingpong", "logp"], mode="quick", maxsize="64K"))
    expect(st == 303 and h.get("Location", "").startswith("/runs/"), "POST a good form: %d %s" % (st, h.get("Location")))
    loc = h.get("Location", "/runs/none/")
    st, _, out = req("POST", "/run", form(tests="pingpong", mode="quick"))
    expect(st == 409 and b"one run at a time" in out, "second run while one is going: %d" % st)
    expect(nruns() == 1, "exactly one run directory (%d)" % nruns())
    st, _, out = req("GET", loc)
    expect(st == 200 and b'id="progress"' in out, "run page")
    # A browser that goes away mid-run: open the stream, read a little, drop it.
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(("GET %sevents HTTP/1.1\r\nHost: x\r\n\r\n" % loc).encode())
    first = s.recv(200)
    expect(first.startswith(b"HTTP/1.0 200") and b"text/event-stream" in first, "events stream: %r" % first[:60])
    s.close()
    # Another browser follows the stream to the end.
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    c.request("GET", loc + "events")
    r = c.getresponse()
    events = r.read().decode()
    c.close()
    expect("data: [1/" in events, "progress lines streamed")
    m = re.search(r"event: end\ndata: (\w+)", events)
    expect(m and m.group(1) == "done", "the stream ends with the run's state (%s)" % (m and m.group(1)))
    st, h, out = req("GET", loc + "report.html")
    expect(st == 200 and b'id="pingpong"' in out and b'id="logp"' in out, "the report is served")
    st, _, out = req("GET", loc + "figures/pingpong-latency.svg")
    expect(st == 200 and out.startswith(b"<svg"), "a figure is served")
    st, _, out = req("GET", "/")
    expect(loc.split("/")[2].encode() in out and b"done" in out, "the start page lists the past run")
    st, _, out = req("GET", "/api/runs")
    expect(st == 200 and json.loads(out)[0]["state"] == "done", "api/runs")
finally:
    srv.terminate()
    srv.wait(timeout=30)

# CGI mode: the same application, one request per process.
def cgi(method, path, body=b"", ctype="application/x-www-form-urlencoded", rundir=runs, err=None):
    env = dict(os.environ, GATEWAY_INTERFACE="CGI/1.1", REQUEST_METHOD=method, PATH_INFO=path,
               CONTENT_LENGTH=str(len(body)) if body else "", CONTENT_TYPE=ctype, CSN_WEB_DIR=rundir,
               CSN_BUILD=build, SCRIPT_NAME="/cgi-bin/csn-web")
    r = subprocess.run([sys.executable, web], input=body, capture_output=True, env=env, timeout=60)
    if err is not None:
        err.append(r.stderr.decode())
    head, _, rest = r.stdout.partition(b"\r\n\r\n")
    m = re.match(rb"Status: (\d+)", head)
    return (int(m.group(1)) if m else 0), head.decode(), rest


# A run directory that is a file: one line on stderr, never a traceback (server: exit 2; CGI: a
# 500 answer, which a traceback once replaced).
notdir = os.path.join(tmp, "a-file")
open(notdir, "w").close()
r = subprocess.run([sys.executable, web, "--port", "0", "--dir", notdir], capture_output=True, text=True, timeout=60)
expect(r.returncode == 2 and r.stderr.count("\n") == 1 and "cannot use the run directory" in r.stderr,
       "server: --dir that is a file: %d %r" % (r.returncode, r.stderr))
errs = []
st, _, _ = cgi("GET", "/", rundir=notdir, err=errs)
expect(st == 500 and errs[0].count("\n") == 1 and "cannot use the run directory" in errs[0],
       "CGI: a run directory that is a file: %d %r" % (st, errs[0]))


st, _, out = cgi("GET", "/")
expect(st == 200 and b"Past runs" in out, "CGI: start page (%d)" % st)
st, _, out = cgi("POST", "/run", b"hosts=a%7Cb&tests=pingpong")
expect(st == 400 and b"bad host name" in out, "CGI: bad host refused (%d)" % st)
st, _, out = cgi("POST", "/run", b"tests=pingpong&maxsize=1e99")
expect(st == 400, "CGI: huge number refused (%d)" % st)
n0 = nruns()
# long enough (about 10 s) that the next CGI process, even slow to start, finds it going
st, head, _ = cgi("POST", "/run", b"tests=pingpong&tests=logp&tests=threadtest&mode=quick&maxsize=64K")
expect(st == 303 and "Location: /cgi-bin/csn-web/runs/" in head, "CGI: a run starts (%d)" % st)
st, _, _ = cgi("POST", "/run", b"tests=pingpong&mode=quick")
expect(st == 409, "CGI: one run at a time (%d)" % st)
if st != 409:
    for d in sorted(os.listdir(runs)):
        if d[0] != ".":
            print(d, open(os.path.join(runs, d, "status.json")).read(), open(os.path.join(runs, d, "csnbench.out")).read()[-500:])
expect(nruns() == n0 + 1, "CGI: one run directory more")
run = re.search(r"runs/([0-9-]+)/", head)
if run:
    st, _, ev = cgi("GET", "/runs/%s/events" % run.group(1))
    expect(b"event: end\ndata: done" in ev, "CGI: progress stream to the end")
# Wait until the detached run has let go of the lock (nothing left behind).
deadline = time.time() + 120
while time.time() < deadline:
    st, _, _ = cgi("POST", "/run", b"tests=nosuch")
    if b'"state": "running"' not in open(os.path.join(runs, sorted(d for d in os.listdir(runs) if d[0] != ".")[-1], "status.json"), "rb").read():
        break
    time.sleep(0.5)
time.sleep(1)
shutil.rmtree(tmp)
for f in failures:
    print("FAIL:", f)
print("%d failures" % len(failures))
sys.exit(1 if failures else 0)

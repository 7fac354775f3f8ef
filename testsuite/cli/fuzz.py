"""fuzz.py — damaged inputs for the spanprof command (make check-cli, and under ASan and UBSan in
make check-sanitize): every value of each JSON input replaced, one at a time, by a value of each
other JSON type and by out-of-range numbers, and each input cut short; every such file given to
report, convert, view, diff and merge (and a capture directory to report).  A command may refuse
a file, with an error; it must never die by a signal (an assertion's abort included), print a
sanitizer's report, or take longer than TIMEOUT seconds.  The mutations are fixed (no random
choice), so a failure reruns as it was.

Usage: python3 fuzz.py TOOL FIXTURES_DIR WORK_DIR
Prints one line per failure and, last, "fuzz: N runs, N failures"; exits 1 on any failure."""
import copy
import json
import os
import subprocess
import sys

TIMEOUT = 20
REPLACEMENTS = [None, "x", -1, 2**64, 1e308, [], {"a": [1]}]

tool, fixtures, work = sys.argv[1], sys.argv[2], sys.argv[3]
# (fixture, commands taking one file FILE)
INPUTS = [
    ("sample.json", ["report FILE", "convert -o OUT FILE", "view -o OUT.html FILE",
                     "diff sample.json FILE", "merge -o OUT.json FILE sample.json"]),
    ("progress.json", ["report FILE", "convert -o OUT FILE"]),
    ("sampled.json", ["report FILE", "merge -o OUT.json FILE FILE"]),
    ("merge-a.json", ["merge -o OUT.json FILE merge-b.json"]),
    ("view-threads.trace.json", ["view -o OUT.html FILE"]),
    ("damaged-captures/slow-1.trace.json", ["report CAPDIR"]),
]


def paths(value, path=()):
    """Every path into VALUE (dict keys and list indexes), the root's children first."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield path + (k,)
            yield from paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value[:2]):
            yield path + (i,)
            yield from paths(v, path + (i,))


def replaced(doc, path, new):
    doc = copy.deepcopy(doc)
    at = doc
    for p in path[:-1]:
        at = at[p]
    at[path[-1]] = new
    return doc


def run(command, file, tag):
    out = os.path.join(work, "out")
    capdir = os.path.join(work, "cap")
    args = [a.replace("FILE", file).replace("OUT", out).replace("CAPDIR", capdir)
            for a in command.split()]
    try:
        p = subprocess.run([tool] + args, cwd=fixtures, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"{tag}: spanprof {command}: no end within {TIMEOUT} s"
    err = p.stderr.decode(errors="replace")
    if p.returncode < 0 or p.returncode >= 128 or "Sanitizer" in err or "runtime error:" in err:
        first = (err.strip().splitlines() or [""])[-1][:200]
        return f"{tag}: spanprof {command}: exit {p.returncode}: {first}"
    return None


runs = 0
failures = []
os.makedirs(os.path.join(work, "cap"), exist_ok=True)
for name, commands in INPUTS:
    with open(os.path.join(fixtures, name), "rb") as f:
        raw = f.read()
    doc = json.loads(raw)
    variants = []
    for path in paths(doc):
        for new in REPLACEMENTS:
            variants.append(("/".join(map(str, path)) + "=" + json.dumps(new),
                             json.dumps(replaced(doc, path, new)).encode()))
    for cut in (len(raw) // 3, len(raw) // 2, len(raw) - 2):
        variants.append((f"cut at {cut}", raw[:cut]))
    for tag, data in variants:
        if name.startswith("damaged-captures/"):
            file = os.path.join(work, "cap", "slow-1.trace.json")
        else:
            file = os.path.join(work, os.path.basename(name))
        with open(file, "wb") as f:
            f.write(data)
        for command in commands:
            runs += 1
            failure = run(command, file, f"{name} {tag}")
            if failure:
                failures.append(failure)
for f in failures[:50]:
    print(f)
print(f"fuzz: {runs} runs, {len(failures)} failures")
sys.exit(1 if failures else 0)

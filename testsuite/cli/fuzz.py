"""fuzz.py — damaged inputs for the spanprof command (make check-cli, and under ASan and UBSan in
make check-sanitize).

From valid inputs of each kind the tool reads — JSON profiles, a live snapshot, Chrome traces, a
flight-recorder capture, folded stacks, pprof profiles, coz profiles — it makes damaged copies:
every JSON value replaced by one of each other type, by huge, negative and fractional numbers, by
a long string and by deep nesting; each file cut short; folded lines with bad counts and frames;
pprof bytes flipped.  Each copy goes to the commands that read its kind (report, view, merge,
convert, diff, coz, select).  A command may refuse a file, but only with an error on stderr
that starts "spanprof: " and names the file (or another of its input files); it must never die by a signal (an assertion's abort
included), print a sanitizer's report, or take longer than TIMEOUT seconds.

The runs are bounded: from every damaged copy and command, RUNS are chosen with a fixed seed, so
each run of the suite gives the tool the same files (a failure names its mutation and reruns as
it was).  FUZZ_RUNS=N changes the number, FUZZ_RUNS=0 runs them all.

Usage: python3 fuzz.py TOOL FIXTURES_DIR WORK_DIR
Prints one line per failure and, last, "fuzz: N runs, N failures"; exits 1 on any failure."""
import copy
import gzip
import json
import os
import random
import subprocess
import sys

SEED = 43
RUNS = int(os.environ.get("FUZZ_RUNS", "2400"))
TIMEOUT = 10


def nested(depth):
    v = 1
    for i in range(depth):
        v = [v] if i % 2 else {"a": v}
    return v


# Each JSON value is replaced by each of these in turn (json-c refuses nesting deeper than 32, so
# 30 levels reach the reader).
REPLACEMENTS = [None, True, "x", "", "x" * 5000, 0, -1, 0.5, -2**63 - 1, 2**64, 1e308, -1e308,
                [], [1, "x"], {}, {"a": [1]}, nested(30)]

tool, fixtures, work = sys.argv[1], sys.argv[2], sys.argv[3]
live_fixtures = os.path.join(fixtures, "..", "live")

# (kind, fixture, commands taking the damaged copy as FILE; OUT is an output path, CAPDIR the
# capture directory holding the copy)
INPUTS = [
    ("json", "sample.json", ["report FILE", "convert -o OUT FILE", "view -o OUT.html FILE",
                             "diff sample.json FILE", "merge -o OUT.json FILE sample.json"]),
    ("json", "progress.json", ["report FILE", "convert -o OUT FILE", "view -o OUT.html FILE"]),
    ("json", "sampled.json", ["report FILE", "merge -o OUT.json FILE FILE", "convert -o OUT FILE"]),
    ("json", "merge-a.json", ["merge -o OUT.json FILE merge-b.json"]),
    ("json", "budget-nested.json", ["select --budget 5 FILE", "report FILE"]),
    ("json", "causal.json", ["coz causal.coz FILE"]),
    ("json", os.path.join(live_fixtures, "server.json"), ["report FILE", "convert -o OUT FILE"]),
    ("json", "view-threads.trace.json", ["view -o OUT.html FILE", "record-trace FILE"]),
    ("json", "captures/slow-1.trace.json", ["report CAPDIR", "view -o OUT.html FILE",
                                            "record-trace FILE"]),
    ("jsonl", "causal.jsonl", ["coz FILE causal.json"]),
    ("folded", "merge-a.folded.txt", ["merge -o OUT.folded FILE merge-b.folded.txt",
                                      "view -o OUT.html FILE", "convert -o OUT FILE", "report FILE"]),
    ("text", "causal.coz", ["coz FILE causal.json"]),
    ("pprof", "sample.json", ["merge -o OUT.pb.gz FILE FILE", "report FILE", "view -o OUT.html FILE"]),
]


def paths(value, path=()):
    """Every path into VALUE (dict keys and list indexes, the first two of a list)."""
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


def cuts(raw):
    return [(f"cut at {n}", raw[:n]) for n in (1, len(raw) // 3, len(raw) // 2, len(raw) - 2)]


def json_variants(raw):
    doc = json.loads(raw)
    out = []
    for path in paths(doc):
        for new in REPLACEMENTS:
            out.append(("/".join(map(str, path)) + "=" + json.dumps(new)[:20],
                        json.dumps(replaced(doc, path, new)).encode()))
    for new in REPLACEMENTS:
        out.append(("root=" + json.dumps(new)[:20], json.dumps(new).encode()))
    return out + cuts(raw)


def jsonl_variants(raw):
    lines = raw.split(b"\n")
    out = []
    for i, line in enumerate(lines[:6]):
        if not line.strip():
            continue
        for tag, data in json_variants(line):
            out.append((f"line {i + 1} {tag}", b"\n".join(lines[:i] + [data] + lines[i + 1:])))
    return out + cuts(raw)


def text_variants(raw, rng):
    """Lines of folded stacks or coz records: fields damaged one line at a time."""
    lines = raw.split(b"\n")
    bad_fields = [b"", b"-1", b"18446744073709551616", b"99999999999999999999999", b"1e308",
                  b"nan", b"0x10", b"\xff\xfe", b"a\0b", b";;;", b"=", b"\t"]
    out = []
    for i, line in enumerate(lines[:8]):
        if not line:
            continue
        for sep in (b" ", b";", b"\t", b"="):
            parts = line.split(sep)
            for j in range(len(parts)):
                for bad in bad_fields:
                    damaged = sep.join(parts[:j] + [bad] + parts[j + 1:])
                    out.append((f"line {i + 1} field {j} of {sep!r} = {bad!r}",
                                b"\n".join(lines[:i] + [damaged] + lines[i + 1:])))
    deep = b";".join(b"f%d" % i for i in range(100000)) + b" 1\n"
    out.append(("a stack of 100000 frames", raw + deep))
    out.append(("a line of 1 MB", raw + b"x" * (1 << 20) + b" 1\n"))
    return out + cuts(raw) + flips(raw, rng, 30)


def flips(raw, rng, n):
    out = []
    for k in range(n):
        data = bytearray(raw)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(data))
            data[at] = rng.choice([0, 0xff, 0x80, 0x7f, data[at] ^ (1 << rng.randrange(8))])
        out.append((f"bytes flipped ({k})", bytes(data)))
    return out


def pprof_variants(raw, rng):
    """RAW is a gzip'd profile.proto: bytes of the protobuf flipped, runs of them set to 0xff
    (varints of ten bytes), the protobuf or the gzip stream cut short."""
    body = gzip.decompress(raw)
    out = [(tag, gzip.compress(data, mtime=0)) for tag, data in flips(body, rng, 200)]
    for k in range(20):
        data = bytearray(body)
        at = rng.randrange(len(data))
        data[at:at + 10] = b"\xff" * 10
        out.append((f"varint of 0xff at {at}", gzip.compress(bytes(data), mtime=0)))
    out += [(tag, gzip.compress(data, mtime=0)) for tag, data in cuts(body)]
    out += [("gzip " + tag, data) for tag, data in cuts(raw)]
    return out


# record --trace merges the traces its processes wrote: a "process" that writes FILE as its
# trace, and sample.json as its profile.
RECORD_TRACE = ["record", "--trace", "-o", "OUT.record", "--", "sh", "-c",
                'd=${SPANPROF_TRACE%/*}; cp "$0" $d/$$.trace.json; cp sample.json $d/$$.json', "FILE"]


def run(command, file, tag):
    out = os.path.join(work, "out")
    capdir = os.path.dirname(file)
    named = os.path.basename(file)
    words = command.split()
    if words[0] == "record-trace":
        words, named = RECORD_TRACE, ".trace.json"
        subprocess.run(["rm", "-rf", out + ".record"])
    args = [a.replace("FILE", file).replace("OUT", out).replace("CAPDIR", capdir) for a in words]
    try:
        p = subprocess.run([tool] + args, cwd=fixtures, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"{tag}: spanprof {command}: no end within {TIMEOUT} s"
    err = p.stderr.decode(errors="replace")
    last = (err.strip().splitlines() or [""])[-1][:200]
    if p.returncode < 0 or p.returncode >= 128 or "Sanitizer" in err or "runtime error:" in err:
        return f"{tag}: spanprof {command}: exit {p.returncode}: {last}"
    inputs = {named} | {a for a in args if os.path.isfile(os.path.join(fixtures, a))}
    if p.returncode != 0 and not any(line.startswith("spanprof: ") and any(n in line for n in inputs)
                                     for line in err.splitlines()):
        return f"{tag}: spanprof {command}: exit {p.returncode} without naming the file: {last}"
    return None


def view_works():
    """Whether view writes pages here: it needs speedscope's files (built with npm)."""
    p = subprocess.run([tool, "view", "-o", os.path.join(work, "probe.html"), "sample.json"],
                       cwd=fixtures, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return p.returncode == 0 or b"speedscope" not in p.stderr


def main():
    rng = random.Random(SEED)
    planned = []  # (fixture, tag, data, command)
    note = ""
    if not view_works():
        note = " (view left out: speedscope's files are not found)"
    for kind, name, commands in INPUTS:
        if note:
            commands = [c for c in commands if not c.startswith("view ")]
        path = os.path.join(fixtures, name)
        if kind == "pprof":
            pb = os.path.join(work, "base.pb.gz")
            subprocess.run([tool, "convert", "-o", pb, path], check=True, stderr=subprocess.DEVNULL)
            with open(pb, "rb") as f:
                variants = pprof_variants(f.read(), rng)
            name += " as pprof"
        else:
            with open(path, "rb") as f:
                raw = f.read()
            variants = {"json": lambda: json_variants(raw), "jsonl": lambda: jsonl_variants(raw),
                        "folded": lambda: text_variants(raw, rng),
                        "text": lambda: text_variants(raw, rng)}[kind]()
        for tag, data in variants:
            for command in commands:
                planned.append((name, tag, data, command))
    if 0 < RUNS < len(planned):
        chosen = sorted(rng.sample(range(len(planned)), RUNS))
        planned = [planned[i] for i in chosen]
    capdir = os.path.join(work, "cap")
    os.makedirs(capdir, exist_ok=True)
    failures = []
    for name, tag, data, command in planned:
        base = os.path.basename(name).replace(" as pprof", ".pb.gz")
        file = os.path.join(capdir if "CAPDIR" in command or "captures/" in name else work, base)
        with open(file, "wb") as f:
            f.write(data)
        failure = run(command, file, f"{name} {tag}")
        if failure:
            failures.append(failure)
    for f in failures[:50]:
        print(f)
    print(f"fuzz: {len(planned)} runs, {len(failures)} failures{note}")
    return 1 if failures else 0


sys.exit(main())

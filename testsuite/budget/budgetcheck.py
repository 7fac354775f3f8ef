#!/usr/bin/env python3
"""budgetcheck.py — checks a profile of budgeted.c against the program's own counts and prints a
summary free of times, for run.sh to compare with an expected file.

usage: budgetcheck.py PROFILE.json PROFILE.folded PROGRAM-STDOUT"""
import json
import sys

profile, folded, stdout = sys.argv[1:4]
own = dict(line.split() for line in open(stdout))
own = {k: int(v) for k, v in own.items()}
d = json.load(open(profile))
spans = {s["name"]: s for s in d["spans"]}
b = d.get("budget")
if b is None:
    print("budget: none in the profile")
else:
    print(f"budget: {b['percent']:g}%, a call's cost measured: {'yes' if b['call_ns'] > 0 else 'no'}")
    share = b["last_share_percent"]
    print(f"budget: the last tick's share under 50 %: {'yes' if share < 50 else f'no ({share:.1f} %)'}")
    if d.get("mode") == "sample":
        print(f"budget: the sampler's time counted: {'yes' if b.get('sampler_cpu_ns', 0) > 0 else 'no'}")
lead = "lookup" in own  # budgeted.c's "lead" rounds
phase = "tiny2" in own  # its "phase" rounds: tiny2 only in the second half
if phase and b is not None:
    # A look every millisecond would make about 1,000 a second.
    looks_per_s = b["looks"] / (d["wall_ns"] / 1e9)
    print(f"budget: the looks slowed down while nothing changed: "
          f"{'yes' if looks_per_s < 250 else f'no ({looks_per_s:.0f} a second)'}")
    print(f"budget: a new call path woke the looks: {'yes' if b.get('looks_woken', 0) >= 1 else 'no'}")
# The calls the program made of each span it counts: work() and medium() once a round.
program_calls = dict(own, work=own["rounds"], medium=own["rounds"])
for name in ("tiny", "marked", "work", "medium") + (("lookup",) if lead else ()) + (("tiny2",) if phase else ()):
    s = spans.get(name)
    if s is None:
        print(f"{name}: not in the profile")
        continue
    off = s.get("switched_off")
    print(f"{name}: switched off: {'yes' if off else 'no'}")
    if not off:
        continue
    print(f"{name}: calls < the program's (a lower bound): "
          f"{'yes' if 0 < s['calls'] < program_calls[name] else 'no'}")
    print(f"{name}: fully off (off_s after at_s): "
          f"{'yes' if off.get('off_s', 0) > off['at_s'] else 'no'}")
    if d.get("clock") != "none" and d.get("mode") != "sample":
        print(f"{name}: mean below 1 us when switched off: {'yes' if 0 < off['mean_ns'] < 1000 else 'no'}")
for name in ("marked", "work", "medium") + (("lookup",) if lead else ()):
    want = program_calls[name]
    got = spans.get(name, {}).get("calls")
    print(f"{name}: calls as the program counted: {'yes' if got == want else f'no ({got} != {want})'}")
chain = ["leaf"] + [f"chain{i}" for i in range(16)]
chain_off = sum(1 for name in chain if spans.get(name, {}).get("switched_off"))
if not lead:
    print(f"chain: at least half of its {len(chain)} spans switched off: {'yes' if chain_off >= len(chain) / 2 else f'no ({chain_off})'}")
a = d["anomalies"]
print("anomalies: " + ", ".join(f"{k} {v}" for k, v in sorted(a.items())))
under_tiny = [line for line in open(folded) if "tiny;" in line]
print(f"stacks with a frame under tiny: {len(under_tiny)}")

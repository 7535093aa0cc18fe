"""One line per stored measurement of the audit database: kernel, backend, config, outcome,
median, verified, message (first 220 characters)."""
import csv
import sys

csv.field_size_limit(1 << 30)
rows = list(csv.DictReader(open(sys.argv[1])))
for r in sorted(rows, key=lambda r: (r["kernel"], r["backend"], r["problem"], r["config"])):
    msg = " ".join(r["message"].split())[:220]
    med = r["median_ms"] and f"{float(r['median_ms']) * 1000:.2f}us"
    print(f"{r['kernel']:<24} {r['backend']:<6} {r['problem']:<22} {r['config']:<34} "
          f"{r['outcome']:<14} {med:<10} verified={r['verified']} | {msg}")

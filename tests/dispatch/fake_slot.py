"""A stand-in for ``python -m flows.work --serve`` (``tests/dispatch/test_warm_box.py``): reads a unit's parameters a
line at a time, sleeps ``sleep_s`` of them, writes ``{"seq", "exit": exit}`` on the results pipe, and ends after an
exit other than 0, as the real slot does; ``vanish`` ends it before it answers."""

import json
import os
import sys
import time

results = os.fdopen(int(sys.argv[1]), "w", buffering=1)
for line in sys.stdin:
    unit = json.loads(line)
    print(f"=== {unit['unit']} ===", flush=True)
    if unit.get("vanish"):
        sys.exit(0)
    time.sleep(unit.get("sleep_s", 0))
    results.write(json.dumps({"seq": unit["seq"], "exit": unit.get("exit", 0)}) + "\n")
    if unit.get("exit", 0):
        sys.exit(unit["exit"])

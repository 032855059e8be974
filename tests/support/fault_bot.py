"""A sichuan-bot/1 bot that fails on purpose (tests/test_exec_agent.py).

    python tests/support/fault_bot.py MODE [N] [PIDFILE]

It plays the first legal action, except at the N-th request of the run (request id
N - 1; every N-th request of the process for ``every_*`` modes) where MODE says how it
fails: ``timeout`` (sleeps), ``crash`` (exits with status 3 after a line on stderr),
``not_json``, ``noise`` (a stray line before the answer), ``unknown`` (an action that is
no action), ``illegal`` (an action not in the legal list), ``bad_id``. ``no_hello`` never
answers hello, ``bad_hello`` answers it with garbage, ``hello_exit`` exits at once.
``ok`` never fails. With PIDFILE, it writes its pid there first.
"""

import json
import os
import sys
import time

mode = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1
if len(sys.argv) > 3:
    with open(sys.argv[3], "a") as f:
        f.write(f"{os.getpid()}\n")
if mode == "hello_exit":
    print("fault_bot: exiting before hello", file=sys.stderr, flush=True)
    sys.exit(1)
seen = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        if mode == "no_hello":
            time.sleep(60)
        if mode == "bad_hello":
            print("hello yourself", flush=True)
            continue
        print(json.dumps({"type": "hello", "protocol": "sichuan-bot/1", "name": "fault",
                          "version": "0", "tables": msg["tables"]}), flush=True)
        continue
    if msg["type"] == "bye":
        break
    if msg["type"] != "request":
        continue
    seen += 1
    action = msg["legal"][0]
    # the N-th request of the run (ids go on across restarts), or every N-th of this process
    due = msg["id"] + 1 == n if not mode.startswith("every_") else seen % n == 0
    kind = mode.removeprefix("every_")
    if due and kind != "crash":  # what a bot logs before it fails: kept with the fault
        print(f"fault_bot: {kind} at request {msg['id']}", file=sys.stderr, flush=True)
    if due and kind == "timeout":
        time.sleep(30)
    if due and kind == "crash":
        print(f"fault_bot: crashing at request {msg['id']}", file=sys.stderr, flush=True)
        sys.exit(3)
    if due and kind == "not_json":
        print("this is not json", flush=True)
        continue
    if due and kind == "noise":  # a stray line, then the answer all the same
        print("debug: thinking...", flush=True)
    if due and kind == "unknown":
        action = "fly away"
    if due and kind == "illegal":
        action = next(a for a in ("discard 1m", "discard 9s", "hu", "pung")
                      if a not in msg["legal"])
    if due and kind == "bad_id":
        print(json.dumps({"id": -5, "action": action}), flush=True)
        continue
    print(json.dumps({"id": msg["id"], "action": action}), flush=True)

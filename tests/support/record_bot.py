"""A sichuan-bot/1 bot that writes down what it is told (tests/test_exec_fair.py).

    python tests/support/record_bot.py LOGFILE

It plays ``hu`` when it can, else the first legal action, and appends one JSON line per
message to LOGFILE: its pid, the message type, for ``hello`` the match id, for a request
the id, table, seat and phase, and the hand at a table's first request.
"""

import json
import os
import sys

log = open(sys.argv[1], "a")  # noqa: SIM115
pid = os.getpid()
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg.get("type")
    entry = {"pid": pid, "type": kind}
    if kind == "hello":
        entry["match"] = msg["match"]
        print(json.dumps({"type": "hello", "name": "record", "tables": msg["tables"]}),
              flush=True)
    elif kind == "request":
        view = msg["view"]
        entry.update(id=msg["id"], table=msg["table"], seat=view["seat"], phase=view["phase"],
                     hand=view["hand"] if view["phase"] == "void" else None)
        legal = msg["legal"]
        print(json.dumps({"id": msg["id"], "action": "hu" if "hu" in legal else legal[0]}),
              flush=True)
    elif kind == "end":
        entry["table"] = msg["table"]
    log.write(json.dumps(entry) + "\n")
    log.flush()
    if kind == "bye":
        break

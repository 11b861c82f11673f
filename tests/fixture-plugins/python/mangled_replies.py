#!/usr/bin/env python3
"""A plugin written by hand (raw JSON-RPC over stdio, no SDK) that gets its replies wrong on purpose,
as its first argument says, at `initialize` (modes `init-*`) or at `execute` (modes `exec-*`):

    string-id     the request's id echoed as a string ("1" for 1)
    null-id       "id": null
    no-jsonrpc    no "jsonrpc" member
    jsonrpc-1.0   "jsonrpc": "1.0"
    batch         the reply wrapped in a JSON array
    bom           the line starts with a UTF-8 byte order mark
    pretty        the reply pretty-printed over several lines
    float-id      "id": 1.5
    unended       the reply without its trailing newline (and stdin kept open)
    oversized     a reply over the 64 MiB maximum message size
    exit-zero     (exec only) exit with code 0 without answering
    host-null     (exec only) send host.store.object.exists with "id": null, then wait
    host-no-jsonrpc (exec only) send host.store.object.exists with the id "h1" but no "jsonrpc",
                  write the answer it gets to stderr ("mangled: host answered: ..."), then answer
    shutdown-exit-1 (any prefix) answer everything, then exit with code 1 after `shutdown`

The package is `agentenv-mangled`; it provides the task step type `mangled`.
"""
import json
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else ""
OUT = sys.stdout.buffer

RESULT = {
    "protocol": 1,
    "plugin": {"name": "agentenv-mangled", "version": "1.0"},
    "contributions": [
        {"group": "task_steps", "name": "mangled", "type": "mangled", "class": "Mangled",
         "methods": ["execute", "from_dict"]},
    ],
    "stores": [],
}


def write(data: bytes) -> None:
    OUT.write(data)
    OUT.flush()


def mangled(defect: str, id_, result) -> None:
    reply = {"jsonrpc": "2.0", "id": id_, "result": result}
    if defect == "string-id":
        reply["id"] = str(id_)
    elif defect == "null-id":
        reply["id"] = None
    elif defect == "no-jsonrpc":
        del reply["jsonrpc"]
    elif defect == "jsonrpc-1.0":
        reply["jsonrpc"] = "1.0"
    elif defect == "float-id":
        reply["id"] = 1.5
    elif defect == "oversized":
        reply["result"] = {"metadata": {"blob": "x" * (64 * 1024 * 1024 + 16)}}
    text = json.dumps(reply, separators=(",", ":"))
    if defect == "batch":
        text = "[" + text + "]"
    if defect == "pretty":
        text = json.dumps(reply, indent=2)
    if defect == "bom":
        write(b"\xef\xbb\xbf" + text.encode() + b"\n")
    elif defect == "unended":
        write(text.encode())
    else:
        write(text.encode() + b"\n")


def reply(id_, result) -> None:
    write(json.dumps({"jsonrpc": "2.0", "id": id_, "result": result}).encode() + b"\n")


for line in sys.stdin:
    message = json.loads(line)
    method, id_ = message.get("method"), message.get("id")
    if id_ is None:
        continue
    if method == "initialize":
        if MODE.startswith("init-"):
            mangled(MODE[len("init-"):], id_, RESULT)
        else:
            reply(id_, RESULT)
    elif method == "execute":
        if MODE == "exec-exit-zero":
            sys.exit(0)
        if MODE == "exec-host-null":
            call_id = message.get("params", {}).get("call_id", id_)
            write(json.dumps({"jsonrpc": "2.0", "id": None, "method": "host.store.object.exists",
                              "params": {"call_id": call_id, "key": "k"}}).encode() + b"\n")
            continue
        if MODE == "exec-host-no-jsonrpc":
            call_id = message.get("params", {}).get("call_id", id_)
            write(json.dumps({"id": "h1", "method": "host.store.object.exists",
                              "params": {"call_id": call_id, "key": "k"}}).encode() + b"\n")
            for answer in sys.stdin:
                if json.loads(answer).get("id") == "h1":
                    sys.stderr.write("mangled: host answered: " + answer.strip() + "\n")
                    sys.stderr.flush()
                    break
            reply(id_, {"metadata": {}})
            continue
        if MODE.startswith("exec-"):
            mangled(MODE[len("exec-"):], id_, {"metadata": {}})
        else:
            reply(id_, {"metadata": {}})
    elif method == "shutdown":
        reply(id_, None)
        if MODE == "shutdown-exit-1":
            sys.stderr.write("mangled: failed to flush my cache at shutdown\n")
            sys.exit(1)
    else:
        reply(id_, None)

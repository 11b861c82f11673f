"""Grades an OpenCiv3 game's outcome: it ended, the engine did not fail, and the turn limit was respected."""

import json
import urllib.request


def _game_state(mcp_url: str) -> dict:
    request = urllib.request.Request(
        mcp_url,
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                         "params": {"name": "get_game_state", "arguments": {}}}).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        answer = json.load(response)
    content = answer["result"]["content"][0]["text"]
    return json.loads(content)


def verify(mcp_url: str) -> dict:
    state = _game_state(mcp_url)
    turn, limit = state.get("turn", 0), state.get("turn_limit", 0)
    rows = [
        {"criterion": "the game is over", "weight": 1, "result": bool(state.get("game_over"))},
        {"criterion": "the engine did not fail", "weight": 1, "result": not state.get("engine_failed")},
        {"criterion": "the turn limit was respected", "weight": 1, "result": 0 < turn <= limit},
    ]
    return {"results": rows, "score": sum(r["weight"] for r in rows if r["result"]) / len(rows)}

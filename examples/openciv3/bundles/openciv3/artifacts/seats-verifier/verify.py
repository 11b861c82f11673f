"""Grades that every seat of an OpenCiv3 match took part: each seat played at least one turn."""

import json
import urllib.request


def verify(mcp_url: str) -> dict:
    request = urllib.request.Request(
        mcp_url,
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                         "params": {"name": "get_game_state", "arguments": {}}}).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        state = json.loads(json.load(response)["result"]["content"][0]["text"])
    seats = state.get("seats", [])
    rows = [{"criterion": f"{seat.get('player')} ({seat.get('civ')}) played", "result": seat.get("turns_played", 0) > 0}
            for seat in seats]
    score = sum(1 for r in rows if r["result"]) / len(rows) if rows else 0.0
    return {"results": rows, "score": score}

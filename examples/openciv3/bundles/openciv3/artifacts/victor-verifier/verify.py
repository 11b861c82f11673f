"""Grades whether the agent seated first won the OpenCiv3 game."""

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
    won = bool(seats) and state.get("victor") == seats[0].get("player")
    return {"results": [{"criterion": "the first seat won", "result": won}], "score": 1.0 if won else 0.0}

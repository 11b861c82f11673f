"""Grades that an OpenCiv3 game ran to its full turn limit (or to a victory before it)."""

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
    full = state.get("turn", 0) >= state.get("turn_limit", 1) or bool(state.get("victory"))
    return {"results": [{"criterion": "the game reached its turn limit or a victory", "result": full}],
            "score": 1.0 if full else 0.0}

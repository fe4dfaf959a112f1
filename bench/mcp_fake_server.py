#!/usr/bin/env python3
"""A minimal stdio MCP server for the MCP benchmarks: TOOLS read-only tools (default 20)
named tool_00 … with a one-property schema; every call answers its arguments at once.
Answers with the protocol version the client asked for.

Usage: python3 bench/mcp_fake_server.py [TOOLS]
"""
import json
import sys

TOOLS = int(sys.argv[1]) if len(sys.argv) > 1 else 20


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


TOOL_LIST = [
    {
        "name": f"tool_{i:02}",
        "description": f"Bench tool number {i}: echoes its text argument.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        "annotations": {"readOnlyHint": True},
    }
    for i in range(TOOLS)
]

for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method = msg.get("method")
    if method == "initialize":
        result = {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": TOOL_LIST}
    elif method == "tools/call":
        text = (msg["params"].get("arguments") or {}).get("text", "")
        result = {"content": [{"type": "text", "text": text}]}
    else:
        result = {}
    send({"jsonrpc": "2.0", "id": msg["id"], "result": result})

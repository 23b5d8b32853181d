"""The command agent of the runner's tests: ``python command_agent.py MODE``, JSON in and out.

The standard library only: the runner starts it once a trial, so it must start in
milliseconds, not import assay (its test agents live in ``assay_test_agents.py``).
"""

from __future__ import annotations

import json
import sys


def command_main() -> None:
    """Answer the JSON on stdin as MODE says (echo, nonjson, exit1, tools)."""
    mode = sys.argv[1]
    data = json.loads(sys.stdin.read())
    if mode == "nonjson":
        print("this is not json")
    elif mode == "exit1":
        print("went wrong", file=sys.stderr)
        raise SystemExit(1)
    elif mode == "tools":
        print(
            json.dumps(
                {
                    "answer": data["answer"],
                    "tool_calls": ["search", {"name": "book"}],
                    "usage": {"input_tokens": 10, "output_tokens": 5, "model": "m"},
                    "scores": {"quality": data.get("quality", 90)},
                }
            )
        )
    else:
        print(json.dumps({"answer": data.get("answer", "ok")}))


if __name__ == "__main__":
    command_main()

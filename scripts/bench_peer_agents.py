#!/usr/bin/env python3
"""The peer of scripts/bench_ask.py: the OpenAI Agents SDK (`pip install openai-agents`) doing
the same one-tool task on the same stub — one `grep` over the work folder, then the answer.
One process per run, as `ask` is.

Usage: python3 scripts/bench_peer_agents.py BASE_URL WORK_DIR   (called by bench_ask.py)
"""
import os, sys

from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
from openai import AsyncOpenAI

WORK = sys.argv[2]


@function_tool
def grep(pattern: str) -> str:
    """Lines of the work folder's files that contain `pattern`."""
    hits = []
    for name in sorted(os.listdir(WORK)):
        with open(os.path.join(WORK, name), errors="replace") as f:
            hits += [f"{name}:{i}:{line.rstrip()}" for i, line in enumerate(f, 1) if pattern in line]
    return "\n".join(hits)


def main():
    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=sys.argv[1], api_key=os.environ.get("FUSEFORKS_SECRET_OPENAI", "sk"))
    agent = Agent(name="reception", instructions="Answer the person.", tools=[grep],
                  model=OpenAIChatCompletionsModel(model="m", openai_client=client))
    result = Runner.run_sync(agent, "hello")
    print(result.final_output)


if __name__ == "__main__":
    main()

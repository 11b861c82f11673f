"""agentenv-grader: an agent-env plugin written in Python with agent_env_plugin (see plugin.py)."""

__version__ = "0.1.0"

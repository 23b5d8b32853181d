"""Agents the runner can call: a Python callable, a command, or an HTTP endpoint.

Load-time problems (a module that does not import, a command that does not exist, a URL that
is not http) raise :class:`~assay.errors.ConfigError`. Per-call problems (the agent raises,
the command prints non-JSON, the endpoint refuses the connection) raise :class:`AgentError`
or the agent's own exception, and become ``error`` trials.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import os
import shlex
import shutil
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from opentelemetry import propagate

from assay.errors import AgentError, ConfigError
from assay.run._processes import MAX_STDOUT_BYTES, OutputTooLarge, run_command
from assay.run._processes import stop_commands as stop_commands  # the runner's
from assay.run._suite import AgentSpec, TestCase


class Agent(Protocol):
    """Something the runner can call with a test's input to get an output."""

    @property
    def description(self) -> str:
        """How the agent is reached, for display."""
        ...

    def invoke(self, input: Any, *, timeout: float | None, seed: int | None) -> Any:
        """Call the agent once; runs in the trial's OpenTelemetry context."""
        ...


def _trace_headers() -> dict[str, str]:
    """W3C ``traceparent`` of the current span, so remote agents can join the trial's trace."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


@dataclass(frozen=True, slots=True)
class CallableAgent:
    """A Python function ``module:function``, sync or async, taking the input."""

    function: Callable[..., Any]
    """The function."""
    spec: str
    """``module:function`` as given."""
    takes_seed: bool
    """The function has a ``seed`` parameter; the runner passes each trial's seed."""
    takes_mocks: bool = False
    """The function has a ``mocks`` parameter; it receives the test's ``mocks`` (or None)."""

    @property
    def description(self) -> str:
        """``module:function``."""
        return self.spec

    def invoke(self, input: Any, *, timeout: float | None, seed: int | None) -> Any:
        """Call the function; await it if it is a coroutine function or returns an awaitable."""
        kwargs: dict[str, Any] = {"seed": seed} if self.takes_seed else {}
        if self.takes_mocks:
            from assay.run._turns import MOCKS

            kwargs["mocks"] = MOCKS.get()
        result = self.function(input, **kwargs)
        if inspect.isawaitable(result):
            return asyncio.run(_await(result))
        return result


async def _await(awaitable: Any) -> Any:
    return await awaitable


def load_callable(spec: str) -> CallableAgent:
    """Import ``module:function`` (the current directory is importable, as with ``python -m``).

    Raises:
        ConfigError: The spec is malformed, the module does not import, or the attribute is
            missing or not callable.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"--agent must look like module:function (got {spec!r})")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except (Exception, SystemExit) as exc:  # the user's module may raise anything on import
        raise ConfigError(
            f"cannot import agent module {module_name!r}: {type(exc).__name__}: {exc}"
        ) from None
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            raise ConfigError(f"agent {spec!r}: module {module_name!r} has no attribute {attr!r}")
        target = getattr(target, part)
    if not callable(target):
        raise ConfigError(f"agent {spec!r} is not callable (it is {type(target).__name__})")
    try:
        parameters = inspect.signature(target).parameters
    except (TypeError, ValueError):
        parameters = {}  # type: ignore[assignment]
    return CallableAgent(target, spec, "seed" in parameters, "mocks" in parameters)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _tool_calls_and_usage(output: Any, model: str | None = None) -> None:
    """Record tool calls and token usage a remote agent reports in its output, as spans.

    A remote agent's own spans do not pass through this process, so its output may declare
    ``"tool_calls": ["search", {"name": "lookup"}]`` (or EvalView's ``"steps": [{"tool":
    ...}]``), ``"usage": {"input_tokens": ..., "output_tokens": ..., "model": ...}`` (or
    EvalView's ``"tokens": {"input": ..., "output": ...}``) and ``"scores": {"quality": 87}``;
    they are recorded as OTel GenAI spans and ``assay.score`` events in the trial.
    """
    if not isinstance(output, dict):
        return
    from assay.instrument import llm, tool

    calls = output.get("tool_calls") or output.get("steps")
    if isinstance(calls, list):
        for call in calls:
            name = (
                next((call.get(k) for k in ("name", "tool", "tool_name") if call.get(k)), None)
                if isinstance(call, dict)
                else call
            )
            if isinstance(name, str) and name:
                with tool(name):
                    pass
    scores = output.get("scores")
    if isinstance(scores, dict):
        from assay.instrument import current_trial

        for name, value in scores.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                current_trial().score(str(name), float(value))
    usage = output.get("usage")
    if not isinstance(usage, dict):
        metadata = output.get("metadata")
        usage = output.get("tokens") or (
            metadata.get("tokens") if isinstance(metadata, dict) else None
        )
    if isinstance(usage, int) and not isinstance(usage, bool):
        usage = {"output_tokens": usage}  # EvalView's "tokens": total, read as completion
    if isinstance(usage, dict):
        name = usage.get("model") or output.get("model") or model
        with llm(str(name) if name is not None else "unknown") as call_:
            tokens_in = _count(usage.get("input_tokens", usage.get("input", 0)))
            tokens_out = _count(usage.get("output_tokens", usage.get("output", 0)))
            call_.usage(tokens_in, tokens_out)


@dataclass(frozen=True, slots=True)
class CommandAgent:
    """A command: the input as JSON on stdin, the output as JSON on stdout.

    The trial's W3C trace context is passed in the ``TRACEPARENT`` environment variable, the
    trial's seed (if any) in ``ASSAY_SEED``.
    """

    argv: tuple[str, ...]
    """The command and its arguments."""

    @property
    def description(self) -> str:
        """The command line."""
        return shlex.join(self.argv)

    def invoke(self, input: Any, *, timeout: float | None, seed: int | None) -> Any:
        """Run the command once; non-zero exit or non-JSON output raise :class:`AgentError`."""
        env = dict(os.environ)
        headers = _trace_headers()
        if "traceparent" in headers:
            env["TRACEPARENT"] = headers["traceparent"]
        if seed is not None:
            env["ASSAY_SEED"] = str(seed)
        try:
            returncode, stdout, stderr = run_command(self.argv, json.dumps(input), env, timeout)
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"command did not finish within {timeout:g} s") from None
        except OutputTooLarge as exc:
            raise AgentError(str(exc)) from None
        except OSError as exc:
            raise AgentError(f"cannot run command: {exc}") from None
        done = subprocess.CompletedProcess(self.argv, returncode, stdout, stderr)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(no stderr)"])[-1]
            raise AgentError(f"command exited with status {done.returncode}: {last[:300]}")
        try:
            output = json.loads(done.stdout)
        except json.JSONDecodeError:
            shown = done.stdout.strip()[:120] or "(nothing)"
            raise AgentError(f"command printed non-JSON output: {shown!r}") from None
        _tool_calls_and_usage(output)
        return output


def load_command(command: str) -> CommandAgent:
    """Split a command line and check that the program exists.

    Raises:
        ConfigError: The command is empty or its program cannot be found.
    """
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise ConfigError(f"--command: cannot parse {command!r}: {exc}") from None
    if not argv:
        raise ConfigError("--command is empty")
    if shutil.which(argv[0]) is None:
        raise ConfigError(f"--command: program {argv[0]!r} not found")
    return CommandAgent(argv)


@dataclass(frozen=True, slots=True)
class HttpAgent:
    """An HTTP endpoint: POST the input as JSON, read the output as JSON (stdlib urllib).

    The request carries the trial's ``traceparent`` header and, if set, ``X-Assay-Seed``.
    An endpoint named by an EvalView file receives EvalView's body (``{"query", "context",
    "enable_tracing": true}``) and the file's headers.
    """

    url: str
    """The endpoint."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Extra headers (EvalView's ``headers`` / ``adapter_config.headers``)."""
    request_timeout: float | None = None
    """Seconds per request, if shorter than the trial's timeout."""
    evalview_body: bool = False
    """Send EvalView's request body instead of the input as it is."""
    model: str | None = None
    """Model of the token usage the endpoint reports without naming one (pricing)."""

    @property
    def description(self) -> str:
        """The URL."""
        return self.url

    def _body(self, input: Any) -> Any:
        if self.evalview_body and isinstance(input, dict) and "query" in input:
            return {
                "query": input["query"],
                "context": input.get("context"),
                "enable_tracing": True,
            }
        return input

    def invoke(self, input: Any, *, timeout: float | None, seed: int | None) -> Any:
        """POST once; connection errors, HTTP errors and non-JSON raise :class:`AgentError`."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        headers.update(self.headers)
        headers.update(_trace_headers())
        if seed is not None:
            headers["X-Assay-Seed"] = str(seed)
        if self.request_timeout is not None:
            timeout = min(timeout, self.request_timeout) if timeout else self.request_timeout
        request = urllib.request.Request(
            self.url, data=json.dumps(self._body(input)).encode(), headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                body = response.read(MAX_STDOUT_BYTES + 1)  # bounded, as a command's stdout
            if len(body) > MAX_STDOUT_BYTES:
                raise AgentError(
                    f"endpoint answered more than {MAX_STDOUT_BYTES // (1024 * 1024)} MiB: "
                    "its answer not read"
                )
        except urllib.error.HTTPError as exc:
            exc.close()  # the error carries the open response
            raise AgentError(f"endpoint answered HTTP {exc.code} {exc.reason}") from None
        except urllib.error.URLError as exc:
            raise AgentError(f"cannot reach endpoint {self.url}: {exc.reason}") from None
        except TimeoutError:
            raise TimeoutError(f"endpoint did not answer within {timeout:g} s") from None
        except OSError as exc:
            raise AgentError(f"endpoint {self.url}: {exc}") from None
        try:
            output = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise AgentError(f"endpoint answered non-JSON: {body[:120]!r}") from None
        _tool_calls_and_usage(output, self.model)
        return output


def load_url(url: str) -> HttpAgent:
    """Check that ``url`` is an http(s) URL with a host.

    Raises:
        ConfigError: It is not.
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise ConfigError(f"--url must be an http:// or https:// URL (got {url!r})")
    return HttpAgent(url)


def load_agent(
    *, agent: str | None = None, command: str | None = None, url: str | None = None
) -> CallableAgent | CommandAgent | HttpAgent:
    """The one agent given by exactly one of ``agent``, ``command``, ``url``.

    Raises:
        ConfigError: None or several are given, or the one given cannot be loaded.
    """
    given = [x for x in (agent, command, url) if x is not None]
    if len(given) != 1:
        raise ConfigError("give exactly one of --agent module:function, --command CMD, --url URL")
    if agent is not None:
        return load_callable(agent)
    if command is not None:
        return load_command(command)
    assert url is not None
    return load_url(url)


def agent_from_spec(spec: AgentSpec) -> HttpAgent:
    """The agent an EvalView file names: its ``http`` adapter and endpoint.

    Raises:
        ConfigError: The adapter is one of EvalView's own (not ``http``), or has no endpoint.
    """
    if spec.adapter != "http":
        raise ConfigError(
            f"{spec.source}: adapter {spec.adapter!r} is one of EvalView's own adapters; assay "
            "reaches http endpoints itself: pass --agent module:function, --command or --url"
        )
    if not spec.endpoint:
        raise ConfigError(f"{spec.source}: adapter http needs an endpoint")
    return HttpAgent(spec.endpoint, dict(spec.headers), spec.timeout, True, spec.model)


def agents_for(
    tests: Sequence[TestCase], default: AgentSpec | None
) -> tuple[Agent, dict[str, Agent]]:
    """The agents the files name, when no agent flag is given.

    Args:
        tests: The tests to run.
        default: The suite's agent (its ``config.yaml``).

    Returns:
        The default agent, and the tests whose own ``adapter``/``endpoint`` differ.

    Raises:
        ConfigError: A test has no agent, or names one assay cannot reach.
    """
    made: dict[tuple[object, ...], HttpAgent] = {}

    def make(spec: AgentSpec) -> HttpAgent:
        key = (spec.adapter, spec.endpoint, *sorted(spec.headers.items()), spec.timeout, spec.model)
        if key not in made:
            made[key] = agent_from_spec(spec)
        return made[key]

    own: dict[str, Agent] = {}
    for test in tests:
        spec = test.agent or default
        if spec is None:
            raise ConfigError(
                f"{test.source}: test {test.id!r} names no agent: give --agent module:function, "
                "--command CMD or --url URL (or an endpoint in the folder's config.yaml)"
            )
        if spec is not default:
            own[test.id] = make(spec)
    first = default or next(t.agent for t in tests if t.agent is not None)
    return make(first), own

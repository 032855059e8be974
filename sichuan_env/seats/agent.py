"""The agent protocol, the random agent, :func:`validate_agent` and :func:`make_agent`.

**Protocol.** An agent maps observations and legal-action masks to actions:

==============================================  =============================================
method                                          shapes
==============================================  =============================================
``act(observation, mask) -> int``               one decision: observation ``(C, 27)`` float32
                                                (see :mod:`sichuan_env.seats.observation`), mask
                                                ``(88,)`` bool
``act_batch(observations, masks) -> actions``   ``(N, C, 27)``, ``(N, 88)`` -> ``(N,)`` int64
==============================================  =============================================

Every returned action must be legal (``mask[action]`` true); :func:`validate_agent`
checks an agent over whole deals. Actions follow :mod:`sichuan_env.core.actions`.
An agent says what its first argument is with the attribute ``needs``: ``"planes"``
(default; the shapes above), ``"view"`` (a :class:`~sichuan_env.seats.view.SeatView` of the N
rows; ``act`` gets one row of it without the batch axis) or ``"nothing"`` (a placeholder
``(N, 0)`` float32 array: the agent reads the masks only, like :class:`RandomAgent`).
:mod:`sichuan_env.seats.driver` builds
the inputs and checks the actions for every environment and the arena. Derive bots from
:class:`BaseAgent` and implement ``act_batch`` (the batched form the vectorised
environments and the arena call) or just ``act`` (one decision; ``act_batch`` then loops
over the rows). ``reset()`` is an optional hook called at the start of a deal.

**Agents by name.** :func:`make_agent` turns a spec string into an agent; every command
and environment that takes an agent by name goes through it::

    random | greedy | rules | ppo | fitted    registered names (ppo, fitted, boosted: shipped
    boosted | best                            models; best: the strongest shipped agent for
                                              the preset)
    ppo:runs/a/model.zip                      a registered name with its argument
    mypkg.bots:MyBot                          an import path: module:attribute
    path/to/mybot.py:MyBot                    a Python file: path.py:attribute
    exec:./mybot  exec:node bot.js            a program in any language speaking the
                                              protocol sichuan-bot/1 (docs/protocol.md;
                                              :mod:`sichuan_env.seats.exec_agent`)
    any of these + ?key=value&key=value       keyword arguments for the constructor

The attribute is a class or a factory function (called with the keyword arguments, and
with ``seed=`` when it accepts one) or a ready agent object. Values in ``?key=value`` are
read as int, float, ``true``/``false``, ``none``, otherwise kept as strings; ``,`` and
``&`` cannot appear in them (command lines separate agents by commas).

Registered names come from the entry points of the group ``sichuan_env.agents`` of
every installed distribution (``[project.entry-points."sichuan_env.agents"]`` in a
``pyproject.toml``: ``mybot = "mypkg.bots:MyBot"``), then from :data:`BUILTIN_AGENTS`,
the project's own bots (the same targets as its entry points, so that a checkout used
without ``pip install -e .`` knows them too). A name given with ``:ARG`` calls the
target with ``ARG`` as first argument. A registered name wins over a module of the same
name.

Specs that are not the project's own names are checked by :func:`validate_agent` on two
real deals before they are returned. Every failure (import, construction, protocol,
validation) raises :class:`AgentSpecError` (a ``ValueError``) with one line that says
what is wrong.

**A run's seats.** :func:`seat_agents` builds the agents of a list of seats from specs
(or objects) the one way every run does (the arena, the environments' opponents,
``train.py``, terminal play): equal specs are one agent, and the ``k``-th distinct one is
seeded with :func:`sichuan_env.core.seeding.agent_seed` (docs/seeding.md).

This module imports nothing from the ``agents`` package; the project's bots are named
by module path strings and imported only when asked for.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from sichuan_env.core import engine
from sichuan_env.core.actions import N_ACTIONS
from sichuan_env.core.rules import Rules, get_rules
from sichuan_env.core.seeding import agent_seed
from sichuan_env.seats.driver import (
    NEEDS,
    NO_OBSERVATION,
    agent_input,
    agent_label,
    agent_needs,
    choose,
    input_row,
    uniform_legal_actions,
)
from sichuan_env.seats.view import SeatView

__all__ = [
    "Agent", "BaseAgent", "RandomAgent", "validate_agent", "NO_OBSERVATION",
    "make_agent", "known_agents", "agents_help", "SPEC_FORMS", "AgentSpecError", "parse_spec",
    "ENTRY_POINT_GROUP",
    "BUILTIN_AGENTS", "NEEDS", "agent_needs", "agent_input", "input_row", "SeatAgents",
    "seat_agents",
]

ENTRY_POINT_GROUP = "sichuan_env.agents"

#: The project's own names (``name -> "module:attribute"``), used when no installed entry
#: point has the name. The same table is registered as entry points in pyproject.toml.
BUILTIN_AGENTS: dict[str, str] = {
    "random": "sichuan_env.seats.agent:RandomAgent",
    "greedy": "sichuan_agents.bots.greedy:GreedyAgent",
    "rules": "sichuan_agents.bots.rules_bot:RulesAgent",
    "ppo": "sichuan_agents.models.ppo:PPOAgent",
    "fitted": "sichuan_agents.models.ppo:fitted_agent",
    "boosted": "sichuan_agents.models.boosted:BoostedAgent",
    "best": "sichuan_agents.models.best:best_agent",
    "rllib": "sichuan_agents.models.rllib_agent:RLlibAgent",
    "search": "sichuan_agents.search.agent:SearchAgent",
}
#: Registered names that need an argument, with how it is shown in messages.
_ARGUMENT_HINTS = {"rllib": "PATH"}
#: Registered names that take an optional argument (``ppo``, ``fitted``, ``boosted``: the
#: shipped model, or a path).
_OPTIONAL_ARGUMENTS = {"ppo": "PATH", "fitted": "PATH", "boosted": "PATH"}

# ----------------------------------------------------------------------------- protocol


@runtime_checkable
class Agent(Protocol):
    """Anything with ``act`` and ``act_batch`` (see the module docstring)."""

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int: ...

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray: ...


class BaseAgent:
    """Base class: implement :meth:`act_batch` (batched) or :meth:`act` (one decision);
    each default calls the other."""

    def act(self, observation: np.ndarray | SeatView, mask: np.ndarray) -> int:
        """One action for one observation ``(C, 27)`` (or one row of a seat view, without the
        batch axis) and mask ``(88,)``."""
        if type(self).act_batch is BaseAgent.act_batch:
            raise NotImplementedError(f"{type(self).__name__} implements neither act nor "
                                      "act_batch")
        if isinstance(observation, SeatView):  # one row of a seat view: add the batch axis
            obs = SeatView(*(np.asarray(f)[None] for f in observation))
        else:
            obs = np.asarray(observation)[None]
        return int(self.act_batch(obs, np.asarray(mask)[None])[0])

    def act_batch(self, observations: np.ndarray | SeatView, masks: np.ndarray) -> np.ndarray:
        """(N,) int64 actions for observations ``(N, C, 27)`` (or an N-row seat view) and
        masks ``(N, 88)``."""
        if type(self).act is BaseAgent.act:
            raise NotImplementedError(f"{type(self).__name__} implements neither act nor "
                                      "act_batch")
        obs = observations if isinstance(observations, SeatView) else np.asarray(observations)
        m = np.asarray(masks)
        return np.array([int(self.act(input_row(obs, i), m[i])) for i in range(m.shape[0])],
                        np.int64)

    def reset(self) -> None:
        """Called by environments at the start of a new deal (optional hook)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class RandomAgent(BaseAgent):
    """Uniform over the legal actions, batched:
    :func:`~sichuan_env.seats.driver.uniform_legal_actions`
    with the agent's generator.

    ``seed`` fixes the agent's own generator, so a game with the same walls and the same
    seeds replays exactly.
    """

    needs = "nothing"
    #: its moves are ``driver.uniform_legal_actions`` of ``rng`` (the driver calls that
    #: directly; read from this class's own namespace, so a subclass does not inherit it)
    uniform_legal_actions_rng = True

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        m = np.asarray(masks).astype(bool, copy=False)
        if m.ndim != 2 or m.shape[1] != N_ACTIONS:
            raise ValueError(f"masks must have shape (N, {N_ACTIONS}), got {m.shape}")
        return uniform_legal_actions(self.rng, np.ascontiguousarray(m),
                                     np.arange(m.shape[0]))

    def __repr__(self) -> str:
        return f"RandomAgent(seed={self.seed})"


def _protocol_gaps(obj: object) -> list[str]:
    """The protocol methods ``obj`` lacks (empty when it is an agent)."""
    return [m for m in ("act", "act_batch") if not callable(getattr(obj, m, None))]


def validate_agent(
    agent: Agent,
    n_deals: int = 8,
    seed: int = 0,
    rules: Rules | str | None = None,
    max_steps: int = 100_000,
) -> None:
    """Play ``n_deals`` deals (one table each, all four seats played by ``agent``, batched,
    through :mod:`sichuan_env.seats.driver`) and raise
    :class:`~sichuan_env.core.engine.IllegalActionError` at the first illegal action,
    ``ValueError`` when ``act_batch`` returns the wrong shape or ``act`` a non-integer,
    ``TypeError`` when ``agent`` lacks ``act`` or ``act_batch``. ``act`` is checked on the
    first decision of every deal (given one row of what the agent needs)."""
    gaps = _protocol_gaps(agent)
    if gaps:
        raise TypeError(f"{agent!r} lacks {' and '.join(gaps)}: an agent needs "
                        "act(observation, mask) -> int and act_batch(observations, masks) "
                        "-> (N,) actions")
    rules = get_rules(rules)
    st = engine.reset(np.arange(seed, seed + n_deals), rules)
    label = agent_label(agent)

    def table(t: int) -> str:
        return f"table {t} (seed {seed + t})"

    for step in range(max_steps):
        live = np.flatnonzero(~st.done)
        if not live.size:
            return
        acts = choose(st, live, [agent], names=[f"{label} (act_batch)"], table_label=table)
        if step == 0:  # the single-decision form, on the first decision of every deal
            choose(st, live, [agent], names=[label], table_label=table, method="act")
        full = np.zeros(st.batch_size, np.int64)
        full[live] = acts
        st, _, _ = engine.step(st, full, inplace=True)
    raise RuntimeError(f"deals did not finish within {max_steps} steps")


# ----------------------------------------------------------------------------- agents by name


class AgentSpecError(ValueError):
    """An agent spec that cannot be resolved, built or validated (one-line message)."""


def _entry_points() -> dict[str, metadata.EntryPoint]:
    """Installed entry points of :data:`ENTRY_POINT_GROUP`, first one per name."""
    found: dict[str, metadata.EntryPoint] = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name.lower(), ep)
    return found


def known_agents() -> list[str]:
    """The registered names, sorted; names that need an argument as ``name:ARG``, names
    with an optional one as ``name[:ARG]``."""
    names = set(_entry_points()) | set(BUILTIN_AGENTS)

    def shown(n: str) -> str:
        if n in _ARGUMENT_HINTS:
            return f"{n}:{_ARGUMENT_HINTS[n]}"
        if n in _OPTIONAL_ARGUMENTS:
            return f"{n}[:{_OPTIONAL_ARGUMENTS[n]}]"
        return n

    return sorted(shown(n) for n in names)


#: The ways to name an agent besides a registered name, as every command's ``--help`` shows
#: them (:func:`agents_help`).
SPEC_FORMS: list[str] = [
    "NAME?key=value&... (options, e.g. search?prior=fitted&departures=play&k=512)",
    "package.module:Class",
    "path/to/file.py:Class",
    "exec:COMMAND (a program in any language speaking sichuan-bot/1, docs/protocol.md)",
]


def agents_help(what: str) -> str:
    """``--help`` text for an option that takes agents: ``what``, then every registered name
    (:func:`known_agents`) and every spec form (:data:`SPEC_FORMS`), so that no command's
    help falls behind the registry."""
    return f"{what}; agents: {', '.join(known_agents())}; or {'; '.join(SPEC_FORMS)}"


_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``target?key=value&...`` into the target and its keyword arguments."""
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"an agent spec string is expected, got {spec!r}")
    target, sep, query = spec.strip().partition("?")
    kwargs: dict[str, Any] = {}
    if sep:
        for item in query.split("&"):
            key, eq, val = item.partition("=")
            key = key.strip()
            if not eq or not _KEY.match(key):
                raise AgentSpecError(f"agent {spec!r}: keyword arguments are key=value pairs "
                                     f"joined by '&', got {item!r}")
            if key in kwargs:
                raise AgentSpecError(f"agent {spec!r}: {key!r} given twice")
            kwargs[key] = _value(val.strip())
    if not target.strip():
        raise AgentSpecError(f"agent {spec!r}: no agent before '?'")
    return target.strip(), kwargs


def _import_file(path_text: str, spec: str) -> Any:
    path = Path(path_text).expanduser()
    if not path.is_file():
        raise AgentSpecError(f"agent {spec!r}: no file {path_text}")
    module_name = "sichuan_agent_file_" + re.sub(r"\W", "_", str(path.resolve()))
    stamp = (path.stat().st_mtime_ns, path.stat().st_size)
    cached = sys.modules.get(module_name)
    if cached is not None and getattr(cached, "__sichuan_file_stamp__", None) == stamp:
        return cached  # loaded before and unchanged since (an edited file is loaded again)
    loader_spec = importlib.util.spec_from_file_location(module_name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise AgentSpecError(f"agent {spec!r}: cannot load {path_text} as a Python file")
    module = importlib.util.module_from_spec(loader_spec)
    module.__sichuan_file_stamp__ = stamp
    sys.modules[module_name] = module
    try:
        loader_spec.loader.exec_module(module)
    except Exception as err:
        del sys.modules[module_name]
        raise AgentSpecError(f"agent {spec!r}: importing {path_text} failed: "
                             f"{type(err).__name__}: {err}") from err
    return module


def _import_module(name: str, spec: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        missing = err.name or name
        if missing == name or name.startswith(missing + "."):
            raise AgentSpecError(f"agent {spec!r}: no module named {missing!r} (an import "
                                 "path is package.module:ClassName, a file path "
                                 "path/to/file.py:ClassName)") from err
        raise AgentSpecError(f"agent {spec!r}: importing {name} failed: module {missing!r} "
                             "is not installed") from err
    except Exception as err:
        raise AgentSpecError(f"agent {spec!r}: importing {name} failed: "
                             f"{type(err).__name__}: {err}") from err


def _attribute(module: Any, where: str, attr: str, spec: str) -> Any:
    obj = module
    for part in attr.split("."):
        if not part.isidentifier() or not hasattr(obj, part):
            raise AgentSpecError(f"agent {spec!r}: {where} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def _load_target(target: str, spec: str) -> tuple[Any, str | None, bool]:
    """(object, argument or None, is one of the project's own names) for a target."""
    head, colon, rest = target.partition(":")
    name = head.lower()
    eps = _entry_points()
    if name in eps or name in BUILTIN_AGENTS:
        arg = rest if colon else None
        if colon and not rest:
            raise AgentSpecError(f"agent {spec!r}: nothing after ':'")
        if name in _ARGUMENT_HINTS and arg is None:
            raise AgentSpecError(f"agent {spec!r} needs an argument: "
                                 f"'{name}:{_ARGUMENT_HINTS[name]}'")
        path = BUILTIN_AGENTS.get(name)
        if name in eps:
            try:
                return eps[name].load(), arg, eps[name].value == path
            except Exception as err:
                if path is None:
                    raise AgentSpecError(f"agent {spec!r}: the entry point {eps[name].value} "
                                         f"does not load: {type(err).__name__}: {err}") from err
        module_name, _, attr = path.partition(":")
        return _attribute(_import_module(module_name, spec), module_name, attr, spec), arg, True
    if not colon:
        raise AgentSpecError(
            f"unknown agent {spec!r}; known agents: {', '.join(known_agents())}; or an import "
            "path: package.module:ClassName or path/to/file.py:ClassName")
    if not rest:
        raise AgentSpecError(f"agent {spec!r}: no attribute after ':'")
    if head.endswith(".py") or "/" in head or "\\" in head:
        module = _import_file(head, spec)
    else:
        module = _import_module(head, spec)
    return _attribute(module, head, rest, spec), None, False


def _accepts(fn: Any, param: str) -> bool:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    return any(p.name == param or p.kind is p.VAR_KEYWORD for p in sig.parameters.values())


def _names(fn: Any, param: str) -> bool:
    """Whether ``fn`` has a parameter called ``param`` (not merely ``**kwargs``)."""
    try:
        return param in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def make_agent(spec: str, seed: int | None = None, *, validate: bool | None = None,
               preset: str | None = None, **kwargs: Any) -> Any:
    """Build the agent named by ``spec`` (see the module docstring).

    ``seed`` is passed to constructors that accept it; ``preset`` (the rule preset the
    agent will play under) to constructors with a parameter named ``rules`` (e.g. ``ppo``,
    which then plays the model shipped for that preset), unless the spec gives one;
    ``kwargs`` are added to (and override) the spec's own ``?key=value`` arguments.
    ``validate`` (default: for specs other than the project's own names) plays two deals
    with :func:`validate_agent` first. Raises :class:`AgentSpecError` naming what is wrong."""
    target, spec_kwargs = parse_spec(spec)
    spec_kwargs.update(kwargs)
    if target.lower().startswith("exec:"):  # a program speaking sichuan-bot/1
        from sichuan_env.seats.exec_agent import exec_agent

        try:
            return exec_agent(target, spec_kwargs, preset=preset, build=lambda fallback:
                              make_agent(fallback, seed=seed, preset=preset))
        except ValueError as err:
            raise AgentSpecError(f"agent {spec!r}: {err}") from err
    obj, arg, own = _load_target(target, spec)
    if isinstance(obj, type) or (callable(obj) and _protocol_gaps(obj)):
        call_kwargs = dict(spec_kwargs)
        if seed is not None and "seed" not in call_kwargs and _accepts(obj, "seed"):
            call_kwargs["seed"] = seed
        if preset is not None and "rules" not in call_kwargs and _names(obj, "rules"):
            call_kwargs["rules"] = preset
        args = () if arg is None else (arg,)
        shown = ", ".join([repr(a) for a in args]
                          + [f"{k}={v!r}" for k, v in call_kwargs.items()])
        try:
            agent = obj(*args, **call_kwargs)
        except Exception as err:
            raise AgentSpecError(f"agent {spec!r}: {getattr(obj, '__name__', obj)}({shown}) "
                                 f"failed: {type(err).__name__}: {err}") from err
    else:
        if spec_kwargs or arg is not None:
            raise AgentSpecError(f"agent {spec!r}: {target} is an agent object, not a class "
                                 "or factory: it takes no arguments")
        agent = obj
    gaps = _protocol_gaps(agent)
    if gaps:
        raise AgentSpecError(
            f"agent {spec!r}: {type(agent).__name__} lacks {' and '.join(gaps)} (an agent "
            "needs act(observation, mask) -> int and act_batch(observations, masks) -> (N,) "
            "actions; subclass sichuan_env.seats.agent.BaseAgent and implement one of them)")
    if validate if validate is not None else not own:
        try:
            validate_agent(agent, n_deals=2, seed=0)
        except Exception as err:
            first = str(err).splitlines()[0] if str(err) else ""
            raise AgentSpecError(f"agent {spec!r} failed validation on real deals: "
                                 f"{type(err).__name__}: {first}") from err
        reset = getattr(agent, "reset", None)
        if callable(reset):
            reset()
    return agent


# ----------------------------------------------------------------------------- seats


def spec_name(agent: Any) -> str:
    """How a run names a seat's agent: the spec string itself, else the agent's ``name``
    attribute, else its repr."""
    return agent if isinstance(agent, str) else getattr(agent, "name", None) or repr(agent)


@dataclass(frozen=True)
class SeatAgents:
    """The agents of a set of seats: ``agents[seat_agent[i]]`` plays seat ``i`` of the
    given list; ``names[k]`` names ``agents[k]`` (the spec, the name its spec gives with
    ``?name=``, or the object's name)."""

    names: list[str]
    agents: list[Any]
    seat_agent: np.ndarray  # (n,) intp


def seat_agents(specs: Sequence[Any], seed: int | None = None, preset: str | None = None,
                *, salt: int = 0, key: Callable[[Any], Any] | None = None) -> SeatAgents:
    """Build the agents of ``specs`` (one per seat: a spec string for :func:`make_agent`
    or an agent object). Equal specs are one agent (``key``: what makes two equal;
    default the spec string itself for strings and the object for objects); the ``k``-th
    distinct one (k = 1, 2, ... in seat order) built from a spec gets the seed
    :func:`sichuan_env.core.seeding.agent_seed` ``(seed, k, salt)`` and the rule ``preset``.
    Objects are checked for ``act`` and ``act_batch`` (``TypeError`` otherwise)."""
    names: list[str] = []
    agents: list[Any] = []
    keys: list[Any] = []
    seat = np.empty(len(specs), np.intp)
    for i, spec in enumerate(specs):
        k = (spec if isinstance(spec, str) else _Same(spec)) if key is None else key(spec)
        if k not in keys:
            keys.append(k)
            name = spec_name(spec)
            if isinstance(spec, str):
                agent = make_agent(spec, seed=agent_seed(seed, len(keys), salt), preset=preset)
                if getattr(agent, "name_given", False):  # e.g. exec:...?name=mybot
                    name = str(agent.name)
                if name in names:
                    for built in agents:
                        if callable(getattr(built, "close", None)):
                            built.close()
                    if callable(getattr(agent, "close", None)):
                        agent.close()
                    raise ValueError(f"two agents go by the name {name!r}: give each its "
                                     "own")
                names.append(name)
                agents.append(agent)
            else:
                names.append(name)
                gaps = _protocol_gaps(spec)
                if gaps:
                    raise TypeError(f"agent {spec!r} lacks {' and '.join(gaps)} (see "
                                    "sichuan_env.seats.agent.Agent)")
                agents.append(spec)
        seat[i] = keys.index(k)
    return SeatAgents(names, agents, seat)


class _Same:
    """Compares equal to the same object only (agents need not be hashable)."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.obj is self.obj

    __hash__ = None  # type: ignore[assignment]

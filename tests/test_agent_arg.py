"""An agent named on a command line: ``module:attr`` works alike in ``shelfie bench rate``, ``shelfie rate`` and
``shelfie errors``, and a bad one is refused in one line before any game."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from shelfie_env.arena.agent_arg import AgentError, agent_name, load_agent
from shelfie_env.arena.results_file import load_results
from shelfie_env.benchmark.cli import main as bench_main
from shelfie_env.cli import main

FIRST_LEGAL = """
    from shelfie_env.game.engine import Game


    def AGENT(state):
        return int(Game.from_dict(state).legal_mask().nonzero()[0][0])


    class Greedy:
        def __init__(self):
            from shelfie_env.bots import make

            self.bot = make("greedy")

        def act(self, state):
            return self.bot.act(state)
    """


@pytest.fixture
def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "probe_agent.py").write_text(textwrap.dedent(FIRST_LEGAL))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("probe_agent", None)
    return "probe_agent"


def test_the_name_of_an_agent() -> None:
    assert agent_name("probe_agent:AGENT") == "probe_agent.AGENT"
    assert agent_name("pkg.agents:Cls.make") == "pkg.agents.Cls.make"
    assert agent_name("td:path=x.npz") == "td:path=x.npz"
    assert agent_name("greedy") == "greedy"
    assert agent_name("models/x.npz") == "models/x.npz"


def test_a_function_comes_wrapped_and_named(probe: str) -> None:
    from shelfie_env.game.engine import Game

    agent = load_agent(f"{probe}:AGENT", 2)
    assert agent.name == "probe_agent.AGENT"
    state = Game.new(2).to_dict()
    assert agent.act(state) == int(Game.from_dict(state).legal_mask().nonzero()[0][0])
    assert load_agent("greedy", 3) == "greedy"
    with pytest.raises(AgentError, match="probe_agent:nothing: probe_agent has no attribute 'nothing'"):
        load_agent(f"{probe}:nothing", 2)


def test_bench_rate_names_a_module_agent_by_itself_and_writes_its_row(probe: str, tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.json"
    assert bench_main(["rate", "--agent", f"{probe}:AGENT", "--games", "50", "--eval-games", "0",
                       "--out", str(out)]) == 0
    (row,) = load_results(out)["rows"]
    assert (row["learner"], row["task"], row["rating"]["games"]) == ("probe_agent.AGENT", "versus-2p", 50)
    assert "row merged into" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("name", "message"),
    [("mine:v2", "a name with ':' reads as a bot spec"), ("level-4", "a level of the ladder"), (" ", "a row needs a name")],
)
def test_bench_rate_refuses_a_name_the_games_cannot_use_before_any_game(
    probe: str, name: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    import shelfie_env.arena.rows as rows

    monkeypatch.setattr(rows, "task_row", lambda *a, **k: pytest.fail("a game was played"))
    with pytest.raises(SystemExit) as exc:
        bench_main(["rate", "--agent", f"{probe}:AGENT", "--name", name, "--out", str(tmp_path / "r.json")])
    assert exc.value.code == 2
    assert f"--name {name!r}: {message}" in capsys.readouterr().err


def test_shelfie_rate_takes_module_attr(probe: str, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from shelfie_env.arena import rate_agent

    asked = []

    def batch(policy, level, players, first_deal, deals, workers, name):
        asked.append((policy, name))
        return 0.5, 0.05, deals * players

    monkeypatch.setattr(rate_agent, "_batch", batch)
    assert main(["rate", f"{probe}:Greedy", "--games", "100"]) == 0
    assert "probe_agent.Greedy" in capsys.readouterr().out
    policy, name = asked[0]
    assert name == "probe_agent.Greedy" and type(policy).__name__ == "Greedy"


def test_shelfie_errors_takes_module_attr(probe: str, capsys) -> None:
    assert main(["errors", f"{probe}:AGENT", "--players", "1"]) == 0
    assert capsys.readouterr().out.startswith("probe_agent.AGENT: error rate ")


@pytest.mark.parametrize("command", ["errors", "rate"])
@pytest.mark.parametrize(
    ("agent", "message"),
    [
        ("no_such_module_xyz:act", "no_such_module_xyz:act: cannot import no_such_module_xyz (ModuleNotFoundError"),
        ("probe_agent:missing", "probe_agent:missing: probe_agent has no attribute 'missing'"),
    ],
)
def test_a_missing_module_or_attribute_is_one_line(probe: str, command: str, agent: str, message: str, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main([command, agent])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"shelfie {command}: error: {message}" in err
    lines = err.strip().splitlines()  # argparse's usage, then the error in one line
    assert "Traceback" not in err and lines[0].startswith("usage:") and lines[-1].startswith(f"shelfie {command}: error:")
    assert sum("error:" in line for line in lines) == 1

"""The option tables of docs/*.md list exactly the options of the parsers they document.

Every table whose first column is ``option`` or ``flag`` is matched to the command
named on the nearest line above it (``shelfie play``, ``shelfie train --backend rllib``,
``shelfie bench report`` ...), and every ``field`` table below a mention of
``TrainConfig`` / ``PPOAfterstateConfig`` / ``TDConfig`` to that config: each option of the
parser is in the table and each option in the table is one of the parser's.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from shelfie_env.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
COMMAND = re.compile(
    r"shelfie (?:play|replay|serve|arena|eval|train-td|train|bench report|bench rate|bench)(?: --backend rllib)?\b|scripts/\w+\.py"
)
CONFIG = re.compile(r"\b(TrainConfig|PPOAfterstateConfig|TDConfig|PPOFlatConfig)\b")
FLAG = re.compile(r"--[a-z][a-z0-9-]*")


@dataclass(frozen=True)
class Table:
    doc: Path
    line: int  # 1-based line of the header row
    header: tuple[str, ...]
    first_column: tuple[str, ...]
    above: tuple[str, ...]  # the lines above the table, nearest first

    def __str__(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def tables(doc: Path) -> list[Table]:
    """Every Markdown table of ``doc`` (header row, then a ``|---`` row, then rows)."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    out = []
    i = 0
    while i < len(lines) - 1:
        if lines[i].startswith("|") and re.match(r"^\|\s*:?-", lines[i + 1]):
            header = tuple(c.strip() for c in lines[i].strip("|").split("|"))
            j = i + 2
            rows = []
            while j < len(lines) and lines[j].startswith("|"):
                rows.append(lines[j].strip("|").split("|")[0].strip())
                j += 1
            out.append(Table(doc, i + 1, header, tuple(rows), tuple(reversed(lines[:i]))))
            i = j
        else:
            i += 1
    return out


ALL_TABLES = [t for doc in DOCS for t in tables(doc)]
OPTION_TABLES = [t for t in ALL_TABLES if t.header[0].lower() in ("option", "flag")]
FIELD_TABLES = [
    t
    for t in ALL_TABLES
    if t.header[0].lower() == "field" and any(CONFIG.search(line) for line in t.above[:40])
]


def documented_command(table: Table) -> str:
    """The first command named on the nearest line above the table that names one."""
    for line in table.above:
        found = COMMAND.search(line)
        if found:
            return found.group(0)
    raise AssertionError(f"{table}: no command named above this option table")


def subparser(command: str) -> argparse.ArgumentParser:
    parser = build_parser(command)
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[command]


def script_parser(path: str) -> argparse.ArgumentParser:
    spec = importlib.util.spec_from_file_location(Path(path).stem, ROOT / path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.build_parser()


def options(parser: argparse.ArgumentParser) -> set[str]:
    """The parser's ``--options`` (without ``--help``; ``--no-x`` of a ``--x`` / ``--no-x`` pair folded into ``--x``)."""
    found = {s for a in parser._actions for s in a.option_strings if s.startswith("--") and s != "--help"}
    return {s for s in found if not (s.startswith("--no-") and "--" + s[5:] in found)}


def rllib_options() -> set[str]:
    """The ``shelfie train`` options the RLlib backend reads."""
    from shelfie_env.rllib.cli import OWN, SHARED

    names = [*SHARED, *OWN, "config", "resume", "export"]
    return {"--" + n.replace("_", "-") for n in names}


def parser_options(command: str) -> set[str]:
    if command.startswith("scripts/"):
        return options(script_parser(command))
    if command == "shelfie train --backend rllib":
        return rllib_options()
    if command == "shelfie bench report":
        from shelfie_env.arena.aggregate import build_parser as report_parser

        return options(report_parser())
    if command == "shelfie bench rate":
        return options(subparser("bench")._subparsers._group_actions[0].choices["rate"])
    return options(subparser(command.split()[1]))


def table_options(table: Table, known: set[str]) -> set[str]:
    flags = {f for cell in table.first_column for f in FLAG.findall(cell)}
    return {f for f in flags if not (f.startswith("--no-") and "--" + f[5:] in known)}


def test_the_docs_have_option_and_field_tables():
    documented = {documented_command(t) for t in OPTION_TABLES}
    assert {
        "shelfie play",
        "shelfie serve",
        "shelfie train --backend rllib",
        "shelfie bench",
        "shelfie bench report",
    } <= documented
    configs = {
        CONFIG.search(line).group(1) for t in FIELD_TABLES for line in t.above[:40] if CONFIG.search(line)
    }
    assert {"TrainConfig", "PPOAfterstateConfig", "TDConfig", "PPOFlatConfig"} <= configs


@pytest.mark.parametrize("table", OPTION_TABLES, ids=str)
def test_an_option_table_lists_exactly_the_parsers_options(table):
    command = documented_command(table)
    real = parser_options(command) - set(FLAG.findall(command))
    shown = table_options(table, real)
    assert not real - shown, f"{table}: options of `{command}` missing from the table: {sorted(real - shown)}"
    assert not shown - real, (
        f"{table}: options in the table that `{command}` does not have: {sorted(shown - real)}"
    )


@pytest.mark.parametrize("table", FIELD_TABLES, ids=str)
def test_a_config_table_lists_every_field_and_the_other_options_are_in_its_guide(table):
    from shelfie_env.train.maskable_ppo.config import TrainConfig
    from shelfie_env.train.ppo_afterstate.config import PPOAfterstateConfig
    from shelfie_env.train.ppo_flat import PPOFlatConfig
    from shelfie_env.train.td import TDConfig

    configs = {
        "TrainConfig": (TrainConfig, "train"),
        "PPOAfterstateConfig": (PPOAfterstateConfig, "train"),
        "TDConfig": (TDConfig, "train"),
        "PPOFlatConfig": (PPOFlatConfig, "train"),
    }
    name = next(CONFIG.search(line).group(1) for line in table.above if CONFIG.search(line))
    cls, command = configs[name]
    fields = {f.name for f in dataclasses.fields(cls)}
    shown = {m for cell in table.first_column for m in re.findall(r"`(\w+)`", cell)}
    assert shown == fields, f"{table}: missing {sorted(fields - shown)}, not fields {sorted(shown - fields)}"
    real = options(subparser(command))
    as_flags = {"--" + f.replace("_", "-") for f in fields}
    assert as_flags <= real, f"fields of {name} without a flag: {sorted(as_flags - real)}"
    # the command's other configs have field tables of their own
    as_flags |= {
        "--" + f.name.replace("_", "-")
        for c, cmd in configs.values()
        if cmd == command
        for f in dataclasses.fields(c)
    }
    guide = table.doc.read_text(encoding="utf-8")
    others = {o for o in real - as_flags if f"`{o}" not in guide and f"{command} {o}" not in guide}
    assert not others, f"{table.doc.name} never mentions these options of shelfie {command}: {sorted(others)}"


def test_the_table_parser_reads_options_and_the_command_above(tmp_path):
    doc = tmp_path / "x.md"
    doc.write_text(
        "Run `shelfie serve`, or `shelfie play`:\n\n| option | meaning |\n|---|---|\n"
        "| `--seat K` / `--no-color` | a |\n| `--a`, `--b-c` | b |\n\ntext\n"
    )
    (table,) = tables(doc)
    assert documented_command(table) == "shelfie serve"
    assert table_options(table, {"--color"}) == {"--seat", "--a", "--b-c"}
    assert table_options(table, set()) == {"--seat", "--no-color", "--a", "--b-c"}


def test_the_benchmark_guide_lists_every_learner_the_script_has():
    parser = subparser("bench")
    algos = next(a for a in parser._actions if "--algos" in a.option_strings)
    guide = (ROOT / "docs" / "benchmark.md").read_text(encoding="utf-8")
    row = next(line for line in guide.splitlines() if line.startswith("| `--algos`"))
    listed = re.findall(r"`(\w+)`", row.split("|")[3])
    assert sorted(listed) == sorted(algos.choices), row
    assert sorted(algos.default) == sorted(algos.choices)
    words = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}
    assert f"all {words[len(algos.choices)]}" in row.split("|")[2], row
    bots = next(a for a in parser._actions if "--bots" in a.option_strings)
    row = next(line for line in guide.splitlines() if line.startswith("| `--bots`"))
    assert {w for w in re.findall(r"`([\w-]+)`", row.split("|")[3]) if not w.startswith("-")} == set(
        bots.choices
    ), row


def test_the_readme_links_the_benchmark_guide_from_its_code_section():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use it from code", 1)[1].split("\n## ", 1)[0]
    assert "[docs/benchmark.md](docs/benchmark.md#evaluate-your-own-agent)" in section
    assert '"Evaluate your own agent"' in section

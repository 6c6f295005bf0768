"""The README fits a screen's worth of reading before the guides: the two commands first (the
test one being what CI runs), one results table that agrees with the benchmark it comes from,
and links (its own and the guides') that lead somewhere."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MARKDOWN = [README, *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _section(text: str, heading: str) -> str:
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def _table(text: str) -> list[list[str]]:
    """The rows (header first) of the Markdown tables in ``text``, without the ``|---`` rows."""
    rows = [line.strip().strip("|").split("|") for line in text.splitlines() if line.startswith("|")]
    return [[c.strip() for c in r] for r in rows if not re.match(r"^:?-", r[0].strip())]


def test_the_readme_is_at_most_150_lines() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 150


def test_the_two_commands_come_first_and_the_test_one_is_what_ci_runs() -> None:
    text = README.read_text(encoding="utf-8")
    first = re.search(r"```bash\n(.*?)```", text, re.S)
    assert first is not None and text.index(first.group(0)) < text.index("\n## ")
    commands = [line.split("#")[0].strip() for line in first.group(1).splitlines()]
    assert commands == ["make play", "make test"]
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^play: ", makefile, re.M) and re.search(r"^test: ", makefile, re.M)


def _guide_rows() -> dict[tuple[str, str], dict[str, str]]:
    """The rows of the ``shelfie bench report`` tables of docs/benchmark.md, by (learner, budget)."""
    text = (ROOT / "docs" / "benchmark.md").read_text(encoding="utf-8")
    out: dict[tuple[str, str], dict[str, str]] = {}
    for block in re.split(r"\n(?!\|)", text):
        rows = _table(block)
        if rows and rows[0][:2] == ["learner", "budget"] and "games vs greedy" in rows[0]:
            head, *body = rows
            for r in body:
                out[(r[0], r[1])] = dict(zip(head, r))
    return out


def _budget(steps: int) -> str:
    return f"{steps // 1_000_000}M" if steps % 1_000_000 == 0 else str(steps)


def _bench_argv(command: str) -> list[str]:
    """The arguments of a ``shelfie bench`` command (or of its script name), without ``--out``."""
    words = command.split()
    for prefix in (
        ["shelfie", "bench"],
        [".venv/bin/shelfie", "bench"],
        ["scripts/bench_algos.py"],
        ["python", "-m", "shelfie_env.benchmark"],
    ):
        if words[: len(prefix)] == prefix:
            words = words[len(prefix) :]
            break
    else:
        return []
    if "--out" in words:
        i = words.index("--out")
        del words[i : i + 2]
    return words


def test_one_results_table_and_it_is_the_benchmarks() -> None:
    results = _section(README.read_text(encoding="utf-8"), "Results")
    head, *rows = _table(results)
    assert len(re.findall(r"^\|---", results, re.M)) == 1, "one results table"
    columns = {
        "corrected score rate vs `greedy`, IQM of 3 seeds (95 % CI)": "IQM corrected score rate vs greedy (95% CI)",
        "raw vs `greedy`": "raw score rate vs greedy",
        "corrected vs `planner`": "corrected vs planner",
        "train s": "train s",
    }
    assert head == ["learner", "budget", *columns]
    # every row is a row of the report tables of docs/benchmark.md ...
    guide = _guide_rows()
    for row in rows:
        bench = guide[(row[0], row[1])]
        assert bench["seeds"] == "0, 1, 2", row[:2]
        for name, cell in zip(head[2:], row[2:]):
            assert cell == bench[columns[name]], (row[:2], name)
    # ... and its numbers are the means over the seeds of rows of the results file (IQM of 3 = mean)
    data = json.loads((ROOT / "docs" / "benchmark_results.json").read_text(encoding="utf-8"))["rows"]
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in data:
        if r.get("protocol") == "duplicate-luck" and r.get("eval", {}).get("deals") == "test":
            name = r["learner"] + (f" ({r['variant']})" if r.get("variant") else "")
            groups.setdefault((name, _budget(r["steps"])), []).append(r)
    for row in rows:
        runs = groups[(row[0], row[1])]
        assert sorted(r["seed"] for r in runs) == [0, 1, 2], row[:2]

        def mean(values: list[float]) -> float:
            return sum(values) / len(values)

        corrected = mean([r["vs_greedy"]["corrected"]["score_rate"] for r in runs])
        assert row[2].startswith(f"{100 * corrected:.1f}% ("), row[:3]
        assert row[3] == f"{100 * mean([r['vs_greedy']['raw']['score_rate'] for r in runs]):.1f}%", row[:2]
        planner = [r["vs_planner"]["corrected"]["score_rate"] for r in runs if "vs_planner" in r]
        assert row[4] == (f"{100 * mean(planner):.1f}%" if planner else "-"), row[:2]
        assert row[5] == f"{mean([r['train_s'] for r in runs]):,.0f}", row[:2]
    # its shelfie bench commands are ones the rows of the results file record (under the command's
    # name or its script's), and the report command follows
    recorded = {tuple(_bench_argv(r.get("command") or "")) for r in data} - {()}
    commands = re.findall(r"^(\.venv/bin/shelfie bench .*)$", results, re.M)
    runs = [c for c in commands if not c.startswith((".venv/bin/shelfie bench report", ".venv/bin/shelfie bench tasks"))]
    assert runs and all(tuple(_bench_argv(c)) in recorded for c in runs), runs
    assert ".venv/bin/shelfie bench report docs/benchmark_results.json" in commands


def _slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    inside = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            inside = not inside
        match = None if inside else re.match(r"^#{1,6} (.*)$", line)
        if match:
            slug = _slug(match.group(1))
            out.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
            seen[slug] = seen.get(slug, 0) + 1
    return out


def _links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return [t for t in LINK.findall(text) if not re.match(r"^[a-z]+:", t)]


@pytest.mark.parametrize("doc", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading(doc: Path) -> None:
    broken = []
    for target in _links(doc):
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        if not path.exists():
            broken.append(
                f"{target}: no file {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}"
            )
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, broken


def test_the_slugs_are_githubs() -> None:
    assert (
        _slug("Reference rows under the luck-aware protocol")
        == "reference-rows-under-the-luck-aware-protocol"
    )
    assert _slug("Options of `shelfie arena`") == "options-of-shelfie-arena"
    assert (
        _slug("TD(λ) on after-state values (`shelfie train-td`)")
        == "tdλ-on-after-state-values-shelfie-train-td"
    )

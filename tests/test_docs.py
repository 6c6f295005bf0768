"""Run the Python examples of the documentation.

Every fenced code block tagged ``python`` in ``README.md`` and in
``docs/**/*.md`` is one test, with an id like ``README.md:42`` (the file and
the line of the opening fence). A block runs in its own interpreter
(``sys.executable``, working directory = repository root) with a time limit.

A block whose opening fence is ``python no-run`` (for examples that train a
model or start a server) is not executed, but it must still compile, so no
block goes unchecked. Any other word after ``python`` on the fence line is an
error. Otherwise a typo such as ``no_run`` would quietly run a long example.
Whether a block runs is decided by its fence, never by this module.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 120
PYTHON_TAGS = {"python", "py", "python3"}
NO_RUN = "no-run"

# An opening or closing fence: indentation (any, so fences inside list items count too),
# then 3+ backticks or tildes, then the info string.
_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")

# Reads the block from a file, compiles it under the Markdown file's name (the
# source is padded so line numbers in a traceback are lines of that file) and
# runs it as a fresh __main__ module.
_RUNNER = (
    "import sys\n"
    "src = open(sys.argv[1], encoding='utf-8').read()\n"
    "exec(compile(src, sys.argv[2], 'exec'), {'__name__': '__main__'})\n"
)


@dataclass(frozen=True)
class Block:
    """One fenced Python block of a Markdown file."""

    path: str  # relative to the repository root, with forward slashes
    line: int  # 1-based line of the opening fence
    options: tuple[str, ...]  # words after the language tag
    source: str

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}"

    def padded_source(self) -> str:
        """The source preceded by blank lines, so its line numbers are lines of the Markdown file."""
        return "\n" * self.line + self.source


def markdown_files() -> list[Path]:
    """README.md and every Markdown file under docs/, in a stable order."""
    files = [ROOT / "README.md"]
    files += sorted((ROOT / "docs").rglob("*.md"))
    return [f for f in files if f.is_file()]


def python_blocks(path: Path, root: Path = ROOT) -> list[Block]:
    """The fenced blocks of ``path`` whose language tag is Python (CommonMark fence rules)."""
    return fenced_blocks(path, PYTHON_TAGS, root)


def fenced_blocks(path: Path, tags: set[str], root: Path = ROOT) -> list[Block]:
    """The fenced blocks of ``path`` whose language tag is one of ``tags``."""
    rel = path.relative_to(root).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m or (m["fence"][0] == "`" and "`" in m["info"]):
            i += 1
            continue
        start, indent, fence = i, len(m["indent"]), m["fence"]
        words = m["info"].split()
        body: list[str] = []
        i += 1
        while i < len(lines):
            close = _FENCE.match(lines[i])
            if (
                close
                and close["fence"][0] == fence[0]
                and len(close["fence"]) >= len(fence)
                and not close["info"].strip()
            ):
                break
            # Content lines lose up to the fence's own indentation.
            line = lines[i]
            strip = len(line) - len(line.lstrip(" "))
            body.append(line[min(strip, indent) :])
            i += 1
        i += 1  # past the closing fence (or the end of the file: the block runs to it)
        if words and words[0].lower() in tags:
            source = textwrap.dedent("\n".join(body)) + "\n"
            blocks.append(Block(rel, start + 1, tuple(words[1:]), source))
    return blocks


def all_blocks() -> list[Block]:
    return [b for f in markdown_files() for b in python_blocks(f)]


BLOCKS = all_blocks()


def test_readme_has_python_examples() -> None:
    readme = [b for b in BLOCKS if b.path == "README.md"]
    assert readme, "README.md has no ```python block; its usage examples are what this module tests"


def test_fence_parser_finds_blocks_and_options(tmp_path: Path) -> None:
    """The parser finds tagged blocks, keeps their options and ignores blocks nested in other fences."""
    doc = tmp_path / "docs" / "x.md"
    doc.parent.mkdir()
    doc.write_text(
        "# t\n"
        "```python\nprint(1)\n```\n"
        "````markdown\n```python\nnot collected\n```\n````\n"
        "```bash\necho no\n```\n"
        "  ```python no-run\n  x = 2\n  ```\n",
        encoding="utf-8",
    )
    blocks = python_blocks(doc, root=tmp_path)
    assert [(b.id, b.options, b.source) for b in blocks] == [
        ("docs/x.md:2", (), "print(1)\n"),
        ("docs/x.md:13", ("no-run",), "x = 2\n"),
    ]


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_python_block(block: Block, tmp_path: Path) -> None:
    # A syntax error fails every block, run or not.
    try:
        compile(block.padded_source(), block.path, "exec")
    except SyntaxError as exc:
        pytest.fail(f"{block.id}: does not compile: {exc}")

    if block.options == (NO_RUN,):
        return  # compiled; the doc marks it as not to be executed
    if block.options:
        pytest.fail(
            f"{block.id}: unknown fence options {' '.join(block.options)!r}; "
            f"use ```python or ```python {NO_RUN}"
        )

    script = tmp_path / "block.py"
    script.write_text(block.padded_source(), encoding="utf-8")
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _RUNNER, str(script), block.path],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(
            f"{block.id}: still running after {TIMEOUT_S} s; "
            f"mark a long example ```python {NO_RUN} in the doc"
        )
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr)[-4000:]
        pytest.fail(f"{block.id}: exited with status {proc.returncode}\n{output}", pytrace=False)


SHELL_TAGS = {"bash", "sh", "shell", "console"}


def shelfie_commands() -> list[tuple[str, list[str]]]:
    """Every ``shelfie ...`` command line of the docs' shell blocks, as ``(where, argv)``."""
    import shlex

    out = []
    for f in markdown_files():
        for block in fenced_blocks(f, SHELL_TAGS):
            text = block.source.replace("\\\n", " ")
            for k, line in enumerate(text.splitlines()):
                words = shlex.split(line, comments=True)
                if not words or not (words[0] == "shelfie" or words[0].endswith("/shelfie")):
                    continue
                if any(w in ("|", "&&", ";", ">", "<") or "$" in w for w in words):
                    continue
                out.append((f"{block.id}+{k + 1}", words[1:]))
    return out


COMMANDS = shelfie_commands()


def test_the_docs_show_shelfie_commands() -> None:
    assert len(COMMANDS) > 20


@pytest.mark.parametrize("argv", [a for _, a in COMMANDS], ids=[w for w, _ in COMMANDS])
def test_shelfie_command_in_the_docs_parses(argv: list[str]) -> None:
    """Every documented ``shelfie`` command names a real subcommand with real flags (parsed, not run)."""
    from shelfie_env import cli

    command = next((w for w in argv if not w.startswith("-")), None)
    parser = cli.build_parser(command if command in cli.LAZY_COMMANDS else None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"shelfie {' '.join(argv)}: argparse refused it (exit {exc.code})")
    assert getattr(args, "_run", None) is not None or argv[:1] in (["--help"], ["-h"])

"""Plain-text picture of a game: every shelf, the scores, the turn and the dice.

Readable without colour: a circled cell is ``(3)``, a crossed one `` X ``, a
free one `` 3 `` (the number is the cell's points). ``color=True`` adds ANSI
colours (one per symbol; circled bold, crossed dim). Used by ``shelfie play``,
the PettingZoo env's ``render()`` and anything that logs games.
"""

from __future__ import annotations

from collections.abc import Sequence

from shelfie_env.game.actions import FACE_NAMES, JOKER, NUM_DICE, SYMBOL_PLURALS
from shelfie_env.game.engine import CIRCLE, CROSS, OVER, REROLL, Game
from shelfie_env.game.scoring import COL_MASKS, MIN_LINE, ROW_MASKS

_RESET = "\033[0m"
_BOLD = "\033[1m"
_DIM = "\033[2m"
# plant green, game yellow, book blue, trophy cyan, cat pink; joker bold white on magenta.
FACE_COLORS = ("\033[32m", "\033[33m", "\033[34m", "\033[36m", "\033[35m", "\033[1;97;45m")
_CROSS_COLOR = "\033[2;31m"


def _paint(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{_RESET}" if color and code else text


def player_label(game: Game, player: int, viewer: int | None, names: Sequence[str] | None = None) -> str:
    """``"player 2"`` or the given name, with ``" (you)"`` for the viewer's seat."""
    label = names[player] if names is not None and player < len(names) else f"player {player + 1}"
    return label + (" (you)" if viewer == player else "")


def _points(n: int) -> str:
    return f"{n} point" + ("" if n == 1 else "s")


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def result_line(game: Game, viewer: int | None = None, names: Sequence[str] | None = None) -> str:
    """The result in one sentence, e.g. ``"Game over — Ana wins with 58 points (Bea 51)."``.

    Ties share first place (``"Ana and Bea tie with 58 points"``); a solo game is a score
    (``"Game over — you scored 61 points."``). The viewer is "you".
    """
    scores = game.scores()

    def who(p: int) -> str:
        return "you" if p == viewer else player_label(game, p, None, names)

    if game.num_players == 1:
        return f"Game over — {who(0)} scored {_points(scores[0])}."
    best = max(scores)
    winners = [p for p in range(game.num_players) if scores[p] == best]
    rest = sorted((p for p in range(game.num_players) if scores[p] != best), key=lambda p: (-scores[p], p))
    if len(winners) == 1:
        verb = "win" if winners[0] == viewer else "wins"
        text = f"{who(winners[0])} {verb} with {_points(best)}"
    else:
        text = f"{_join([who(p) for p in winners])} tie with {_points(best)}"
    if rest:
        text += " (" + ", ".join(f"{who(p)} {scores[p]}" for p in rest) + ")"
    return f"Game over — {text}."


def _cell_text(game: Game, player: int, row: int, col: int, width: int, color: bool) -> str:
    pts = str(game.points[row][col])
    state = game.cell(player, row, col)
    if state == 1:
        return " " + _paint(f"({pts:>{width}})", _BOLD + FACE_COLORS[row], color) + " "
    if state == 2:
        return " " + _paint(f" {'X':>{width}} ", _CROSS_COLOR, color) + " "
    return f"  {pts:>{width}}  "


def render_shelf(
    game: Game,
    player: int,
    viewer: int | None = None,
    color: bool = False,
    names: Sequence[str] | None = None,
) -> list[str]:
    """The lines of one player's shelf: header, 5 rows, a column-points footer."""
    width = max(len(str(v)) for row in game.points for v in row)
    cw = width + 4
    circled = game.circled[player]
    crossed = game.crossed[player]
    score = game.score(player)
    breakdown = game.table.breakdown(circled)
    name = player_label(game, player, viewer, names)
    turn = "  <- on turn" if game.current == player and game.phase != OVER else ""
    lines = [_paint(f"{name}: {score} points{turn}", _BOLD, color)]
    lines.append(" " * 9 + "".join(f"{'#' + str(c + 1):^{cw}}" for c in range(5)))
    for r in range(5):
        cells = "".join(_cell_text(game, player, r, c, width, color) for c in range(5))
        m = ROW_MASKS[r]
        n_circ = bin(circled & m).count("1")
        notes = []
        if circled & m == m:
            notes.append("complete")
        elif (circled | crossed) & m == m:
            notes.append("full")
        if n_circ >= MIN_LINE:
            notes.append(f"+{breakdown['rows'][r]}")
        else:
            notes.append(f"{n_circ}/{MIN_LINE}")
        label = _paint(f"{SYMBOL_PLURALS[r]:<9}", FACE_COLORS[r], color)
        lines.append(f"{label}{cells}  {' '.join(notes)}")
    foot = []
    for c in range(5):
        m = COL_MASKS[c]
        n_circ = bin(circled & m).count("1")
        if circled & m == m:
            txt = "done"
        elif n_circ >= MIN_LINE:
            txt = f"+{breakdown['cols'][c]}"
        else:
            txt = f"{n_circ}/{MIN_LINE}"
        foot.append(f"{txt:^{cw}}")
    lines.append(f"{'columns':<9}" + "".join(foot))
    return lines


def dice_words(dice: Sequence[int]) -> str:
    """The faces of ``dice`` named in order, e.g. ``"plant game cat joker"``."""
    return " ".join(FACE_NAMES[d] for d in dice)


def render_dice(game: Game, color: bool = False) -> str:
    """The six dice with their 1-based positions; spent dice marked ``used``."""
    parts = []
    for i in range(NUM_DICE):
        face = game.dice[i]
        name = FACE_NAMES[face].upper() if face == JOKER else FACE_NAMES[face]
        if game.spent[i]:
            parts.append(_paint(f"{i + 1}:{name}(used)", _DIM, color))
        else:
            parts.append(f"{i + 1}:" + _paint(name, FACE_COLORS[face], color))
    return "  ".join(parts)


def render_status(
    game: Game, viewer: int | None = None, color: bool = False, names: Sequence[str] | None = None
) -> list[str]:
    """Scores, whose turn, the phase, the dice and what the phase allows."""
    scores = game.scores()
    lines = [
        "Scores: "
        + " | ".join(f"{player_label(game, p, viewer, names)} {scores[p]}" for p in range(game.num_players))
        + ("   [end triggered: last round]" if game.end_triggered and not game.over else "")
    ]
    if game.over:
        lines.append(_paint(result_line(game, viewer, names), _BOLD, color))
        return lines
    who = player_label(game, game.current, viewer, names)
    phase = game.phase_name
    detail = {
        REROLL: f"rolls left: {game.rolls_left}",
        CIRCLE: f"circles this turn: {game.circles}/3",
        CROSS: "nothing can be circled: cross out a row",
    }[game.phase]
    lines.append(f"Turn: {who} | phase: {phase} | {detail}")
    lines.append("Dice: " + render_dice(game, color))
    return lines


def render_text(
    game: Game,
    viewer: int | None = None,
    color: bool = False,
    names: Sequence[str] | None = None,
    status: bool = True,
) -> str:
    """The whole table as text: every shelf (seat order), then scores, turn and dice.

    ``viewer`` marks that seat as "(you)"; ``names`` optionally labels seats.
    Cells: ``(3)`` circled, `` X `` crossed, `` 3 `` free (numbers are points);
    after each row its progress (``2/3`` circles, or ``+N`` points once it
    scores) and ``complete`` when all five are circled (rivals are locked out);
    the footer gives the same for columns (``done`` = column complete).
    ``status=False`` leaves out the scores/turn/dice block (the shelves only).
    """
    blocks: list[str] = []
    for p in range(game.num_players):
        blocks.append("\n".join(render_shelf(game, p, viewer, color, names)))
    if status:
        blocks.append("\n".join(render_status(game, viewer, color, names)))
    return "\n\n".join(blocks)


__all__ = [
    "FACE_COLORS",
    "dice_words",
    "player_label",
    "render_dice",
    "render_shelf",
    "render_status",
    "render_text",
    "result_line",
]

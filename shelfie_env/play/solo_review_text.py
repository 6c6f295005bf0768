"""A solo game's exact review (:mod:`shelfie_env.arena.analysis.solo_review`) as text.

:func:`render_solo_review` is what ``shelfie replay FILE --review`` prints for a solo game: the
score against E*, the luck and the decisions' loss that make up the difference, the loss per
decision, each turn's luck and the biggest mistakes with their exact cost. :func:`solo_end_text`
is the short form ``shelfie play`` prints when a solo game ends.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from shelfie_env.play.layout import wrap
from shelfie_env.play.review_parts import MARKS, WIDTH, situation


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def balance(review: Mapping[str, Any]) -> str:
    """The score as the start value plus the luck minus the loss (a finished game) or, after a
    resignation, the score at that point."""
    p = review["players"][0]
    if p["resigned"]:
        return f"{p['name']} resigned with {p['score']} points."
    fresh = abs(review["start_value"] - review["optimum"]) < 1e-9
    start = f"{review['optimum']:.2f} (E*)" if fresh else f"{review['start_value']:.2f} (the first position's value)"
    return (
        f"{p['score']} = {start} {'+' if p['luck'] >= 0 else '-'} {abs(p['luck']):.2f} (the dice's luck) "
        f"- {p['regret']:.2f} (lost by the decisions)."
    )


def loss_line(review: Mapping[str, Any], subject: str = "Loss per decision") -> str:
    """The loss per decision with the number of decisions, mistakes and blunders."""
    p, th = review["players"][0], review["thresholds"]
    return (
        f"{subject}: {p['loss_per_decision']:.3f} expected points over "
        f"{_plural(p['decisions'], 'decision')} ({p['regret']:.2f} in all; "
        f"{_plural(p['mistakes'], 'mistake')} of {th['mistake']:g} points or more, "
        f"{_plural(p['blunders'], 'blunder')} of {th['blunder']:g} or more)."
    )


def mistake_lines(review: Mapping[str, Any], width: int | None, numbered_from: int = 1) -> list[str]:
    """The biggest mistakes, each with where it was, what was played, the best move and its cost."""
    lines: list[str] = []
    for k, m in enumerate(review["mistakes"], numbered_from):
        lines += [
            wrap(f"move {m['move']}, round {m['round']}: {situation(m)}", width, "     ", f"{k}. "),
            wrap(f"played {m['played']}", width, "          ", "   "),
            wrap(f"better {m['better']}", width, "          ", "   "),
            f"   cost {m['regret']:.3f} expected final points ({m['value']:.2f} instead of {m['best_value']:.2f})",
        ]
    return lines


def render_solo_review(review: Mapping[str, Any]) -> str:
    """The full solo review as text (module doc)."""
    p, th = review["players"][0], review["thresholds"]
    lines = [
        *_prose(f"Exact review: the solo game is solved, so every value is exact, in {review['unit']}."),
        "",
        *_prose(
            f"{p['name']} scored {p['score']}. E* = {review['optimum']:.2f}: what perfect play scores on "
            "average from the empty shelf."
        ),
        *_prose(balance(review)),
        *_prose(loss_line(review)),
        "",
        *_prose(
            "Luck per turn: the value after the turn's rolls minus the average over everything they could "
            "have shown."
        ),
        "round    luck",
    ]
    for t in review["turns"]:
        lines.append(f"{t['round']:>5}  {t['luck']:+6.2f} {MARKS[t['mark']]}".rstrip())
    lines += [
        f"total  {p['luck']:+6.2f}",
        *_prose(
            f"(+ lucky, - unlucky: a turn's luck of {th['lucky']:g} points or more either way; "
            f"++ / --: {th['very_lucky']:g} or more)"
        ),
        "",
    ]
    mistakes = review["mistakes"]
    if not mistakes:
        lines.append("No mistakes: every move played was a best move.")
    else:
        lines.append(f"The {len(mistakes)} biggest mistake{'s' if len(mistakes) > 1 else ''}:")
        lines += mistake_lines(review, WIDTH)
    return "\n".join(lines) + "\n"


def solo_end_text(
    start: Mapping[str, Any], actions: Sequence[int], states: Sequence[Mapping[str, Any]], width: int | None
) -> str:
    """What ``shelfie play`` says when a solo game ends: E*, the score's balance, the loss per
    decision and the biggest mistakes (or, when the exact review cannot be made, why)."""
    from shelfie_env.arena.analysis.review import review_game

    try:
        review = review_game(start, actions, states, names=["you"])
    except ValueError as exc:  # a table that is damaged or solved for other points
        return wrap(f"(no exact review of this game: {exc})", width, "  ")
    lines = [
        wrap(
            f"E* = {review['optimum']:.2f}: what perfect play scores on average from the empty shelf. "
            f"Your score: {balance(review)}",
            width,
        ),
        wrap(loss_line(review, "Your expected loss per decision"), width),
    ]
    if review["mistakes"]:
        lines += ["Your biggest mistakes (cost: expected final points lost):", *mistake_lines(review, width)]
    else:
        lines.append("No mistakes: every move you played was a best move.")
    return "\n".join(lines)


def _prose(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, break_on_hyphens=False)


__all__ = ["balance", "loss_line", "mistake_lines", "render_solo_review", "solo_end_text"]

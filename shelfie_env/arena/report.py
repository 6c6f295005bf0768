"""Arena reports: Markdown tables, results stored in a model card, a training run's curve."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from shelfie_env.arena.results import clipped


def to_markdown(result: dict[str, Any]) -> str:
    """Human-readable tables of a :func:`run_arena` result."""
    cfg = result.get("config", {})
    lines = [f"# Arena: {cfg.get('players', '?')}-player games", ""]
    if cfg:
        deals = f"`{cfg['deals']}` deals" if "deals" in cfg else "deals"
        seating = (
            f"each deal played under every seating ({cfg['seatings']})"
            if cfg.get("duplicate")
            else "seats rotated"
        )
        lines += [
            (
                f"Bots: {', '.join(f'`{b}`' for b in cfg['bots'])}; "
                f"{cfg['games_per_group']} games per group on {deals} (dice seeds {cfg['seeds']}, "
                f"{cfg.get('dice', 'stream')} dice), {seating}; "
                f"{cfg['wall_time_s']} s on {cfg['workers']} worker(s)."
            ),
            "",
        ]
    if cfg.get("field"):
        lines += [f"Each bot alone against {cfg['players'] - 1} × `{cfg['field']}`.", ""]
    solo = cfg.get("players") == 1
    timing = {x["bot"]: x for x in result.get("timing", [])}
    lines += [
        "| bot | games | mean score ± sd | first place (95% CI) | mean rank (95% CI) "
        "| decision ms (median / p99 / max) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for b in result["bots"]:
        first = rank = "—"
        if not solo:
            first = _pct(b["first_place_rate"], b.get("first_place_ci95"))
            if "mean_rank" in b:
                lo, hi = b["mean_rank_ci95"]
                rank = f"{b['mean_rank']:.2f} ({lo:.2f}–{hi:.2f})"
        ms = timing.get(b["bot"])
        times = f"{ms['median']:.3f} / {ms['p99']:.2f} / {ms['max']:.1f}" if ms else "—"
        lines.append(
            f"| `{b['bot']}` | {b['games']} | {b['mean_score']:.1f} ± {b['sd_score']:.1f} | {first} | {rank} "
            f"| {times} |"
        )
    if not solo and cfg.get("players", 2) > 2 and all("first_place_by_seat" in b for b in result["bots"]):
        n = cfg["players"]
        lines += [
            "",
            "| bot | first place by seat: " + " | ".join(f"seat {s + 1}" for s in range(n)) + " |",
            "|---|" + "---:|" * n,
        ]
        for b in result["bots"]:
            cells = [
                _pct(x["first_place_rate"], x["ci95"]) if x["games"] else "—"
                for x in b["first_place_by_seat"]
            ]
            lines.append(f"| `{b['bot']}` | " + " | ".join(cells) + " |")
    if result["pairings"] and not cfg.get("field"):
        lines += [
            "",
            (
                "| bot | opponent | games | W / T / L | win rate (95% CI) | by bot's seat (1st / 2nd …) "
                "| score ± sd | opp. score ± sd |"
            ),
            "|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        for p in result["pairings"]:
            lo, hi = p["win_ci95"]
            by_seat = " / ".join(
                f"{100 * x['win_rate']:.1f}%" if x["games"] else "—" for x in p.get("by_seat", [])
            )
            lines.append(
                f"| `{p['bot']}` | `{p['opponent']}` | {p['games']} | "
                f"{p['wins']} / {p['ties']} / {p['losses']} | "
                f"{100 * p['win_rate']:.1f}% ({100 * lo:.1f}–{100 * hi:.1f}) | {by_seat or '—'} | "
                f"{p['mean_score']:.1f} ± {p['sd_score']:.1f} | "
                f"{p['opp_mean_score']:.1f} ± {p['opp_sd_score']:.1f} |"
            )
    lines += _results_table(result)
    if result.get("ratings"):
        lines += _openskill_table(result)
    return "\n".join(lines) + "\n"


def _openskill_table(result: dict[str, Any]) -> list[str]:
    """The OpenSkill table, with a line under it saying what orders it and where that order differs from
    the first-place rates of the first table."""
    lines = [
        "",
        "| rank | bot | OpenSkill mu ± sigma | ordinal (mu − 3 sigma) |",
        "|---:|---|---:|---:|",
    ]
    for k, r in enumerate(result["ratings"], 1):
        lines.append(f"| {k} | `{r['bot']}` | {r['mu']:.2f} ± {r['sigma']:.2f} | {r['ordinal']:.2f} |")
    note = (
        "OpenSkill ranks by its ordinal, the conservative mu − 3 sigma, fitted game by game in the order "
        "played: after few games sigma is wide and its order can differ from the results above, which "
        "count the same games directly."
    )
    first = {b["bot"]: b.get("first_place_rate") for b in result.get("bots", [])}
    order = [r["bot"] for r in result["ratings"]]
    for i, above in enumerate(order):
        below = next((b for b in order[i + 1:] if _beats(first.get(b), first.get(above))), None)
        if below is not None:
            note += (
                f" Here it ranks `{above}` above `{below}`, whose first-place rate is the higher "
                f"({100 * first[below]:.1f} % to {100 * first[above]:.1f} %)."
            )
            break
    return [*lines, "", note]


def _beats(rate: float | None, other: float | None) -> bool:
    return rate is not None and other is not None and rate > other


def _results_table(result: dict[str, Any]) -> list[str]:
    """Mean rank reward, raw and luck-corrected, per pairing (two players) or per bot."""
    res = result.get("results")
    if not res:
        return []
    rows = res["pairings"] or res["bots"]
    lucky = any("corrected" in r for r in rows)
    head = "| bot | opponent " if res["pairings"] else "| bot "
    lines = [
        "",
        f"Rank reward (win +1, tie 0, loss −1; score rate = (1 + mean) / 2); 95% intervals over "
        f"{res['unit']}"
        + (
            " (corrected results printed within the range of the rank reward); games factor = raw variance / "
            "corrected variance: how many times fewer games the corrected result needs for the same interval"
            if lucky
            else ""
        )
        + ("; luck measured with `" + str(result["config"].get("luck")) + "`" if lucky else "")
        + ".",
        "",
        head
        + "| games | raw mean (95% CI) | raw score rate"
        + (" | corrected mean (95% CI) | corrected score rate | games factor" if lucky else "")
        + " |",
        "|---|"
        + ("---|" if res["pairings"] else "")
        + "---:|---:|---:|"
        + ("---:|---:|---:|" if lucky else ""),
    ]
    for r in rows:
        who = f"| `{r['bot']}` | `{r['opponent']}` " if "opponent" in r else f"| `{r['bot']}` "
        raw = r["raw"]
        cells = [str(r["games"]), _mean_ci(raw), _pct(raw["score_rate"], raw["score_rate_ci95"])]
        if lucky and "corrected" in r:
            c = clipped(r["corrected"])
            cells += [
                _mean_ci(c),
                _pct(c["score_rate"], c["score_rate_ci95"]),
                games_factor(r.get("variance_ratio")),
            ]
        lines.append(who + "| " + " | ".join(cells) + " |")
    return lines


def games_factor(ratio: float | None) -> str:
    """The games factor as printed: ``5.5×``, or ``none`` when raw or corrected results do not vary."""
    return "none" if ratio is None else f"{ratio:.1f}×"


def _mean_ci(x: dict[str, Any]) -> str:
    lo, hi = x["ci95"]
    return f"{x['mean']:+.3f} ({lo:+.3f} to {hi:+.3f})"


def _pct(rate: float, ci: list[float] | None) -> str:
    """``51.2% (49.0–53.4)``: a rate with its interval, in percent."""
    text = f"{100 * rate:.1f}%"
    return f"{text} ({100 * ci[0]:.1f}–{100 * ci[1]:.1f})" if ci else text


def plot_run(run: str | Path, out: str | Path | None = None) -> Path:
    """Plot win rate (or solo mean score) vs training steps from a run's ``eval.jsonl``;
    returns the PNG path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(run)
    log = path / "eval.jsonl" if path.is_dir() else path
    if not log.is_file():
        raise FileNotFoundError(f"no evaluation log {log}")
    recs = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    if not recs:
        raise ValueError(f"{log} holds no evaluations yet")
    fig, ax = plt.subplots(figsize=(7, 4))
    draw_run(ax, recs)
    ax.set_title(f"Evaluation of {log.parent.name}")
    png = Path(out) if out else log.with_name("win_rate.png")
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)
    return png


def draw_run(ax: Any, recs: list[dict[str, Any]]) -> None:
    """Draw the evaluations ``recs`` of a run's ``eval.jsonl`` on ``ax``: each opponent's win rate with its
    95 % interval (a band through two or more points, an error bar on a single one), or the solo mean score."""
    xkey = "steps" if "steps" in recs[0] else "games_played"  # PPO runs count steps, TD runs games
    steps = [r[xkey] for r in recs]
    if "solo" in recs[0]:
        ax.plot(steps, [r["solo"]["mean_score"] for r in recs], marker=".", label="solo mean score")
        ax.set_ylabel("mean score")
    else:
        for opp in ("greedy", "planner", "random"):
            if opp in recs[0]:
                ci = [r[opp].get("ci95") or r[opp]["win_ci95"] for r in recs]
                rate = [r[opp]["win_rate"] for r in recs]
                if len(recs) == 1:  # a band through one point has no width: an error bar shows the interval
                    yerr = [[rate[0] - ci[0][0]], [ci[0][1] - rate[0]]]
                    ax.errorbar(steps, rate, yerr=yerr, marker=".", capsize=4, label=f"vs {opp}")
                else:
                    ax.plot(steps, rate, marker=".", label=f"vs {opp}")
                    ax.fill_between(steps, [c[0] for c in ci], [c[1] for c in ci], alpha=0.2)
        ax.set_ylabel("win rate (95% CI)")
        ax.set_ylim(0, 1)
    ax.set_xlabel("learner steps" if xkey == "steps" else "self-play games")
    ax.grid(alpha=0.3)
    ax.legend()


def _deals_suffix(cfg: dict[str, Any]) -> str:
    deals = str(cfg.get("deals", f"seed {cfg.get('seed', 0)}"))
    if deals == "test":
        return ""
    return "_" + deals.replace(" ", "")


def record_in_card(model: str | Path, result: dict[str, Any], command: str) -> Path:
    """Store ``result`` (and the command that produced it) under ``evaluation`` in a model card."""
    from shelfie_env.bots.learned.card import card_path, load_card, write_card

    card = load_card(model)
    cfg = result["config"]
    listed = cfg["bots"][: len(cfg["bots"]) - cfg["players"] + 1] if cfg.get("field") else cfg["bots"]
    key = (
        f"arena_{cfg['players']}p_"
        + "_vs_".join(b.split(":")[0] for b in listed)
        + (f"_field_{cfg['field'].split(':')[0]}" if cfg.get("field") else "")
        + f"_{cfg['games_per_group']}g"
        + _deals_suffix(cfg)  # runs on other dice keep their own entry
        + ("_duplicate" if cfg.get("duplicate") else "")
    )
    card.setdefault("evaluation", {})[key] = {
        "command": command,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **{k: result[k] for k in ("bots", "pairings", "ratings") if k in result},
        "config": cfg,
    }
    write_card(model, card)
    return card_path(model)

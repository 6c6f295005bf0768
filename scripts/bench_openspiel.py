"""Speed of the OpenSpiel game ``python_shelfie`` against OpenSpiel's C++ ``yacht`` and our engine.

    python scripts/bench_openspiel.py               # about two minutes on one core
    python scripts/bench_openspiel.py --games 200 --searches 20 --sims 100

Prints, per game: clone and apply_action in microseconds (means over the states
of random games), a whole random game (chance sampled from ``chance_outcomes``)
in milliseconds, then the simulations per second of OpenSpiel's ``MCTSBot`` with
OpenSpiel's random rollouts and with our engine's rollouts (random, greedy).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pyspiel
from open_spiel.python.algorithms import mcts

import shelfie_env.openspiel as so
from shelfie_env.game.engine import Game
from shelfie_env.openspiel.bots import EngineRolloutEvaluator


def _sample(state: pyspiel.State, rng: np.random.Generator) -> int:
    if state.is_chance_node():
        ids, ps = zip(*state.chance_outcomes())
        return int(ids[rng.choice(len(ids), p=ps)])
    legal = state.legal_actions()
    return legal[int(rng.integers(len(legal)))]


def random_game(game: pyspiel.Game, rng: np.random.Generator) -> list[pyspiel.State]:
    """The states of one random game (chance sampled by its probabilities)."""
    state = game.new_initial_state()
    states = []
    while not state.is_terminal():
        states.append(state.clone())
        state.apply_action(_sample(state, rng))
    return states


def _best_of(rounds: int, states: list, actions: list, clone: Callable, apply: Callable) -> tuple[float, float]:
    """Fastest of ``rounds`` passes: us per clone, and per apply on those clones."""
    clock = time.perf_counter
    best_clone = best_apply = float("inf")
    for _ in range(rounds):
        t0 = clock()
        copies = [clone(s) for s in states]
        best_clone = min(best_clone, (clock() - t0) / len(states) * 1e6)
        t0 = clock()
        for s, a in zip(copies, actions):
            apply(s, a)
        best_apply = min(best_apply, (clock() - t0) / len(states) * 1e6)
    return best_clone, best_apply


def per_state(game: pyspiel.Game, games: int, seed: int) -> dict[str, float]:
    """Mean clone and apply_action times (us) over the states of random games, and ms per random game."""
    rng = np.random.default_rng(seed)
    states = [s for _ in range(max(1, games // 10)) for s in random_game(game, rng)]
    actions = [_sample(s, rng) for s in states]
    clone_us, apply_us = _best_of(3, states, actions, lambda s: s.clone(), lambda s, a: s.apply_action(a))
    clock = time.perf_counter
    t0 = clock()
    steps = 0
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply_action(_sample(state, rng))
            steps += 1
    game_ms = (clock() - t0) / games * 1e3
    return {"clone_us": clone_us, "apply_us": apply_us, "game_ms": game_ms, "steps": steps / games}


def engine_numbers(players: int, games: int, seed: int) -> dict[str, float]:
    """The same for our engine: Game.clone, Game.step, a random game (dice rolled inside step)."""
    rng = np.random.default_rng(seed)
    clock = time.perf_counter
    snaps: list[Game] = []
    for i in range(max(1, games // 10)):
        g = Game.new(players, rng=seed + i)
        while not g.over:
            snaps.append(g.clone())
            legal = g.legal_actions()
            g.step(legal[int(rng.integers(len(legal)))])
    acts = [s.legal_actions()[int(rng.integers(len(s.legal_actions())))] for s in snaps]
    clone_us, apply_us = _best_of(3, snaps, acts, lambda g: g.clone(), lambda g, a: g.step(a))
    t0 = clock()
    steps = 0
    for i in range(games):
        g = Game.new(players, rng=np.random.default_rng(seed + i))
        while not g.over:
            legal = g.legal_actions()
            g.step(legal[int(rng.integers(len(legal)))])
            steps += 1
    game_ms = (clock() - t0) / games * 1e3
    return {"clone_us": clone_us, "apply_us": apply_us, "game_ms": game_ms, "steps": steps / games}


def sims_per_second(game: pyspiel.Game, evaluator: mcts.Evaluator, searches: int, sims: int, seed: int) -> float:
    """MCTSBot simulations per second, over ``searches`` searches from decision nodes of random games."""
    rng = np.random.default_rng(seed)
    bot = mcts.MCTSBot(game, 2.0, sims, evaluator, random_state=np.random.RandomState(seed))
    roots = [s for s in random_game(game, rng) if not s.is_chance_node() and len(s.legal_actions()) > 1]
    picks = [roots[int(i)] for i in rng.integers(len(roots), size=searches)]
    t0 = time.perf_counter()
    for root in picks:
        bot.step(root)
    return searches * sims / (time.perf_counter() - t0)


def _row(name: str, r: dict[str, float]) -> str:
    return f"| {name} | {r['clone_us']:.1f} | {r['apply_us']:.1f} | {r['game_ms']:.2f} | {r['steps']:.0f} |"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=50, help="random games per timing (default 50)")
    ap.add_argument("--searches", type=int, default=5, help="MCTS searches per evaluator (default 5)")
    ap.add_argument("--sims", type=int, default=50, help="simulations per search (default 50)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.games < 1 or args.searches < 1 or args.sims < 1:
        ap.error("--games, --searches and --sims must be positive")
    shelfie, yacht = so.load(2), pyspiel.load_game("yacht")
    print(f"2 players; means over the states of random games ({args.games} games per line)\n")
    print("| game | clone us | apply_action us | random game ms | steps per game |")
    print("|---|---:|---:|---:|---:|")
    print(_row("python_shelfie (OpenSpiel, Python)", per_state(shelfie, args.games, args.seed)))
    print(_row("yacht (OpenSpiel, C++)", per_state(yacht, args.games, args.seed)))
    print(_row("our engine (Game)", engine_numbers(2, args.games, args.seed)))
    print(f"\nMCTSBot, {args.sims} simulations per search, {args.searches} searches from random positions\n")
    print("| game | leaf evaluator | simulations per second |")
    print("|---|---|---:|")
    cases: list[tuple[str, pyspiel.Game, str, Callable[[], mcts.Evaluator]]] = [
        ("yacht", yacht, "OpenSpiel RandomRolloutEvaluator",
         lambda: mcts.RandomRolloutEvaluator(1, np.random.RandomState(args.seed))),
        ("python_shelfie", shelfie, "OpenSpiel RandomRolloutEvaluator",
         lambda: mcts.RandomRolloutEvaluator(1, np.random.RandomState(args.seed))),
        ("python_shelfie", shelfie, "EngineRolloutEvaluator random",
         lambda: EngineRolloutEvaluator("random", 1, np.random.default_rng(args.seed))),
        ("python_shelfie", shelfie, "EngineRolloutEvaluator greedy",
         lambda: EngineRolloutEvaluator("greedy", 1, np.random.default_rng(args.seed))),
    ]
    for name, game, label, make in cases:
        rate = sims_per_second(game, make(), args.searches, args.sims, args.seed)
        print(f"| {name} | {label} | {rate:,.0f} |")


if __name__ == "__main__":
    main()

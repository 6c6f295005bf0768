"""TD(λ) self-play: an after-state value network that learns the game from its own games.

The learner is a :class:`~shelfie_env.bots.learned.value.ValueBot`: at the
start of a turn the network values every position the turn can end in
(:mod:`~shelfie_env.bots.learned.afterstate`; game-ending ones get their exact
final reward), and the planner's exact search over the dice picks the moves.
Nothing else goes in: the weights start random, no teacher plays, no
hand-written value is a feature or a target.

Each iteration plays ``games`` games (every seat the learner, or, with
probabilities ``opp_greedy`` / ``opp_random`` per seat, those bots), ``lockstep``
at a time: every game whose learner seat starts a turn is valued in one network
forward. For every turn a learner seat plays it records the position the turn
ended in, ``s_t``, and its value ``V_t = f(s_t)``. Along each seat's own turns
the λ-return is

    G_T = R,   G_t = (1 - λ) V_{t+1} + λ G_{t+1}

with ``R`` the seat's final reward (rank reward + ``margin_coef`` x margin / 50,
from its own point of view), and ``f(s_t)`` is fitted to ``G_t`` by mean squared
error (``epochs`` passes of Adam); game-ending positions are valued exactly and
not fitted. ``run_dir`` holds ``latest.pt`` (network,
optimiser, iteration, random state: resumes exactly), ``eval.jsonl`` (arena
games against ``greedy`` and ``planner``) and ``best.npz`` / ``latest.npz`` with
their cards, playable as ``td:path=...``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from shelfie_env.arena.deals import deal_start
from shelfie_env.bots import make
from shelfie_env.bots.learned.afterstate import AfterstateNet, feature_size
from shelfie_env.bots.learned.card import make_card, write_card
from shelfie_env.bots.learned.expect_head import NUM_SETS
from shelfie_env.bots.learned.reply import ReplySearch
from shelfie_env.bots.learned.value import SET_INDEX, LearnedContext, SearchedContext, ValueBot
from shelfie_env.bots.planner.search import action_values, best_action
from shelfie_env.game.engine import REROLL, Game
from shelfie_env.train.checkpoint import load_run_state, save_run_state
from shelfie_env.train.td.config import TDConfig


def lambda_returns(values: np.ndarray, reward: float, lam: float) -> np.ndarray:
    """λ-returns of one seat's turns: ``values[t]`` estimates the outcome after turn ``t``.

    The last turn's return is ``reward``; earlier ones mix the next turn's value and return.
    """
    out = np.empty(len(values), dtype=np.float64)
    g = float(reward)
    for t in range(len(values) - 1, -1, -1):
        out[t] = g
        g = (1.0 - lam) * float(values[t]) + lam * g
    return out


def turn_targets(turns: list[tuple[Any, float]], reward: float, lam: float) -> np.ndarray:
    """The λ-return targets of one seat's turns ``(position, value)``, in order."""
    return lambda_returns(np.array([v for _, v in turns]), reward, lam)


def search_returns(values: np.ndarray, reward: float, lam: float) -> np.ndarray:
    """λ-returns in which ``values[t]``, a search's value of position ``t`` itself, stands in for
    the next position's value: ``G_t = (1 - λ) values[t] + λ G_{t+1}``, ``G_T = reward``."""
    out = np.empty(len(values), dtype=np.float64)
    g = float(reward)
    for t in range(len(values) - 1, -1, -1):
        g = out[t] = (1.0 - lam) * float(values[t]) + lam * g
    return out


def final_rewards(scores: list[int], margin_coef: float) -> list[float]:
    """Every seat's reward from its own point of view: rank reward plus the margin term."""
    out = []
    for p, own in enumerate(scores):
        others = scores[:p] + scores[p + 1 :]
        rank = (sum(o < own for o in others) - sum(o > own for o in others)) / len(others)
        out.append(rank + margin_coef * (own - max(others)) / 50.0)
    return out


def placement_index(before: Game, after: Game, seat: int) -> int:
    """The network output of the placement ``seat``'s turn ended with (a circle set or a cross-out)."""
    done = after.circled[seat] & ~before.circled[seat]
    if done:
        return SET_INDEX[done]
    crossed = after.crossed[seat] & ~before.crossed[seat]
    return NUM_SETS + (int(crossed).bit_length() - 1) // 5


class _Table:
    """One self-play game: its engine, its seats (``None``: the learner) and the learner turns so far."""

    def __init__(self, game: Game, seats: list[Any]) -> None:
        self.game, self.seats = game, seats
        self.turns: list[list[tuple[Any, ...]]] = [[] for _ in seats]  # (position or None, value[, game])


def play_games(
    net: AfterstateNet, cfg: TDConfig, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
    """Self-play ``cfg.games`` games, ``cfg.lockstep`` at a time; returns positions, λ-returns and stats."""
    greedy, random_bot = make("greedy"), make("random", seed=int(rng.integers(1 << 31)))
    search = ReplySearch(net, cfg.search_width, LearnedContext) if cfg.players == 2 else None
    pending: list[_Table] = []
    for _ in range(cfg.games):  # every game's dice and seats are drawn up front, in order
        game = Game.new(cfg.players, rng=np.random.default_rng(int(rng.integers(1 << 62))))
        seats: list[Any] = []
        for s in range(cfg.players):
            u = rng.random()
            bot = (
                greedy if u < cfg.opp_greedy else random_bot if u < cfg.opp_greedy + cfg.opp_random else None
            )
            seats.append(bot if s else None)
        order = rng.permutation(cfg.players)  # the learner's guaranteed seat is drawn every game
        pending.append(_Table(game, [seats[i] for i in order]))
    pending.reverse()
    xs: list[np.ndarray] = []
    rets: list[float] = []
    replies: list[tuple[list[np.ndarray], list[Game], int, float]] = []  # target "reply": fitted after play
    learner_games = decisions = 0
    active: list[_Table] = []
    while pending or active:
        while pending and len(active) < cfg.lockstep:
            active.append(pending.pop())
        for t in active:  # the bots move until a learner turn starts
            while not t.game.over and t.seats[t.game.current] is not None:
                t.game.step(t.seats[t.game.current].act_game(t.game))
        on_turn = [t for t in active if not t.game.over]
        turns = net.turns_many([t.game for t in on_turn]) if on_turn else []
        for t, (vals, after) in zip(on_turn, turns):  # one whole learner turn in each game
            game, p = t.game, t.game.current
            start, ctx = game.clone(), LearnedContext(game, vals)
            while True:
                searched = cfg.play_depth == 2 and game.phase != REROLL and search is not None
                c: Any = SearchedContext(ctx, game, search) if searched else ctx
                game.step(best_action(action_values(game, ctx=c)))
                decisions += 1
                if game.over or game.current != p or (game.phase == REROLL and game.rolls_left == 2):
                    break
            a = placement_index(start, game, p)
            x, over = after.of(a)
            if over:
                t.turns[p].append((None, float(vals[a])))  # game-ending: exact, not fitted
            else:
                t.turns[p].append((x, float(vals[a]), game.clone() if cfg.target == "reply" else None))
        for t in [t for t in active if t.game.over]:
            rewards = final_rewards(t.game.scores(), cfg.margin_coef)
            for p, turns in enumerate(t.turns):
                if t.seats[p] is not None or not turns:
                    continue
                learner_games += 1
                kept = [turn for turn in turns if turn[0] is not None]
                if cfg.target == "reply":
                    if kept:
                        replies.append(([k[0] for k in kept], [k[2] for k in kept], p, rewards[p]))
                    continue
                for (x, *_), target in zip(
                    turns, turn_targets([turn[:2] for turn in turns], rewards[p], cfg.lam)
                ):
                    if x is not None:
                        xs.append(x)
                        rets.append(target)
            active.remove(t)
    if replies and search is not None:
        positions = [g for _, games, _, _ in replies for g in games]
        seats = [p for _, games, p, _ in replies for _ in games]
        values = search.turn_start_values(positions, seats)
        at = 0
        for feats, games, _, reward in replies:
            xs.extend(feats)
            rets.extend(search_returns(values[at : at + len(games)], reward, cfg.lam).tolist())
            at += len(games)
    stats = {"positions": len(rets), "learner_seats": learner_games, "decisions": decisions}
    return np.asarray(xs, np.float32).reshape(len(rets), -1), np.asarray(rets, np.float32), stats


def _play_chunk(
    task: tuple[AfterstateNet, TDConfig, int],
) -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
    net, cfg, seed = task
    return play_games(net, cfg, np.random.default_rng(seed))


def play_parallel(
    net: AfterstateNet, cfg: TDConfig, rng: np.random.Generator, pool: Any
) -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
    """:func:`play_games` split over ``cfg.workers`` processes (one seed per share, drawn from ``rng``)."""
    shares = [cfg.games // cfg.workers + (k < cfg.games % cfg.workers) for k in range(cfg.workers)]
    seeds = rng.integers(1 << 62, size=cfg.workers)
    tasks = [(net, dataclasses.replace(cfg, games=n, workers=1), int(s)) for n, s in zip(shares, seeds) if n]
    parts = pool.map(_play_chunk, tasks)
    stats = {k: sum(p[2][k] for p in parts) for k in parts[0][2]}
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]), stats


def _ignore_interrupts() -> None:
    """In a worker process: Ctrl-C is the parent's to handle (it ends the workers)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


class TDTrainer:
    """A TD(λ) run in ``cfg.run_dir``: build or resume, iterate, evaluate, export."""

    def __init__(self, cfg: TDConfig) -> None:
        import torch
        from torch import nn

        self.cfg = cfg
        self.run_dir = Path(cfg.run_dir)
        torch.manual_seed(cfg.seed)
        size = feature_size(cfg.players)
        layers: list[nn.Module] = []
        width = size
        for w in cfg.net_arch:
            layers += [nn.Linear(width, w), nn.Tanh()]
            width = w
        layers.append(nn.Linear(width, 1))
        self.model = nn.Module()
        self.model.values = nn.Sequential(*layers)
        nn.init.zeros_(layers[-1].weight)
        nn.init.zeros_(layers[-1].bias)
        if cfg.init:
            self._start_from(cfg.init)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=cfg.learning_rate)
        self.iteration = 0
        self.rng = np.random.default_rng(cfg.seed)
        self.wall = 0.0
        self.decisions = 0
        self.best = -float("inf")

    def _start_from(self, name: str) -> None:
        """Copy the weights of a ``td`` model file (or ``shipped``) into the network."""
        import torch

        from shelfie_env.bots.learned.value import load_value_bot, shipped_td_model

        path = shipped_td_model(self.cfg.players) if name == "shipped" else Path(name)
        if not path.is_file():
            raise FileNotFoundError(f"init: no model file {path}")
        net = load_value_bot(path, self.cfg.players).net
        linears = [m for m in self.model.values if isinstance(m, torch.nn.Linear)]
        shapes = [tuple(w.shape) for w, _ in net.layers]
        wanted = [(m.in_features, m.out_features) for m in linears]
        if shapes != wanted:
            raise ValueError(f"init: {path} has layers {shapes}, net_arch {self.cfg.net_arch} needs {wanted}")
        with torch.no_grad():
            for m, (w, b) in zip(linears, net.layers):
                m.weight.copy_(torch.as_tensor(w.T))
                m.bias.copy_(torch.as_tensor(b))

    # ------------------------------------------------------------------ state
    def numpy_net(self) -> AfterstateNet:
        """The network as it is now, in numpy."""
        state = {k: v.detach().cpu().numpy() for k, v in self.model.state_dict().items()}
        return AfterstateNet.from_state(state, self.cfg.players, self.cfg.margin_coef)

    def save(self) -> None:
        import torch

        save_run_state(
            self.run_dir,
            {
                "model": self.model.state_dict(),
                "opt": self.opt.state_dict(),
                "iteration": self.iteration,
                "rng": self.rng.bit_generator.state,
                "torch_rng": torch.get_rng_state(),
                "wall": self.wall,
                "decisions": self.decisions,
                "best": self.best,
                "config": dataclasses.asdict(self.cfg),
            },
        )
        self.export(self.run_dir / "latest.npz", {})

    def load(self) -> None:
        import torch

        data = load_run_state(self.run_dir / "latest.pt")
        self.model.load_state_dict(data["model"])
        self.opt.load_state_dict(data["opt"])
        self.iteration, self.wall, self.best = data["iteration"], data["wall"], data["best"]
        self.decisions = data.get("decisions", 0)
        self.rng.bit_generator.state = data["rng"]
        torch.set_rng_state(data["torch_rng"])

    def export(self, path: Path, evaluation: dict[str, Any]) -> Path:
        """The network as ``path`` (``.npz``) + card (``algo`` TD(λ), ``teacher`` none)."""
        path = Path(path).with_suffix(".npz")
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.stem + ".tmp.npz")
        np.savez_compressed(tmp, **self.numpy_net().state())
        tmp.replace(path)
        card = make_card(
            self.cfg.players,
            algo="TD(lambda)",
            config=dataclasses.asdict(self.cfg),
            steps=self.iteration * self.cfg.games,
            wall_time_s=self.wall,
            evaluation=evaluation,
            extra={"teacher": "none", "bot": "td", "steps_unit": "games", "value_net": "afterstate"},
        )
        write_card(path, card)
        return path

    # ------------------------------------------------------------- one step
    def fit(self, xs: np.ndarray, rets: np.ndarray) -> float:
        import torch

        n = len(rets)
        x, g = torch.as_tensor(xs), torch.as_tensor(rets)
        losses = []
        for _ in range(self.cfg.epochs):
            perm = torch.as_tensor(self.rng.permutation(n))
            for i in range(0, n, self.cfg.batch_size):
                idx = perm[i : i + self.cfg.batch_size]
                pred = self.model.values(x[idx])[:, 0]
                loss = torch.mean((pred - g[idx]) ** 2)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                losses.append(loss.item())
        return float(np.mean(losses))

    def evaluate(self) -> dict[str, Any]:
        """Arena games against each of ``eval_opponents``: head to head with two players, else the
        learner against a field of that bot (its first-place rate)."""
        from shelfie_env.arena import run_arena

        bot = ValueBot(self.numpy_net(), depth=self.cfg.play_depth, width=self.cfg.search_width)
        n = self.cfg.players
        rec: dict[str, Any] = {"iteration": self.iteration, "games_played": self.iteration * self.cfg.games}
        rec["decisions"] = self.decisions
        rec["wall_s"] = round(self.wall, 1)
        for opp in self.cfg.eval_opponents:
            field = {f"{opp}#{k}": make(opp) for k in range(2, n)}  # more seats of the same bot
            res = run_arena(
                ["td", opp, *field],
                n,
                self.cfg.eval_games,
                deal_start(self.cfg.deals),
                workers=1,
                ratings=False,
                bots={"td": bot, **field},
            )
            if n == 2:
                pair = res["pairings"][0]
                keys = ("games", "wins", "ties", "losses", "win_rate", "win_ci95", "mean_score")
                rec[opp] = {k: pair[k] for k in keys}
            else:
                mine = next(b for b in res["bots"] if b["bot"] == "td")
                rec[opp] = {
                    "games": mine["games"],
                    "win_rate": mine["first_place_rate"],
                    "mean_score": mine["mean_score"],
                }
        return rec

    def run(self, resume: bool = False, log: Any = print) -> Path:
        """Play-and-fit until ``cfg.iterations``; checkpoints after every iteration."""
        from threadpoolctl import threadpool_limits

        if resume:
            self.load()
            log(f"[td] resumed {self.run_dir} at iteration {self.iteration}")
        elif (self.run_dir / "latest.pt").exists():
            raise FileExistsError(f"{self.run_dir} already holds a run; resume it or choose another run_dir")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "config.json").write_text(json.dumps(dataclasses.asdict(self.cfg), indent=2) + "\n")
        with threadpool_limits(1), self.workers() as pool:
            while self.iteration < self.cfg.iterations:
                self.step(pool, log)
        return self.run_dir

    @contextlib.contextmanager
    def workers(self) -> Iterator[Any]:
        """The pool of ``cfg.workers`` self-play processes (``None`` for one), one BLAS thread each."""
        import torch

        torch.set_num_threads(1)
        if self.cfg.workers == 1:
            yield None
            return
        import multiprocessing as mp

        # The workers read this when they import numpy: two BLAS threads per worker on a
        # small machine cost more than they bring (the matrices are a few hundred rows).
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        pool = mp.get_context("spawn").Pool(self.cfg.workers, initializer=_ignore_interrupts)
        try:
            yield pool
        except BaseException:  # Ctrl-C or an error: the workers' games are not needed any more
            pool.terminate()
            raise
        finally:
            pool.close()

    def learning_rate(self) -> float:
        """The step size of the coming fit."""
        late = self.cfg.lr_late and self.iteration >= self.cfg.lr_late_from
        return self.cfg.lr_late if late else self.cfg.learning_rate

    def step(self, pool: Any = None, log: Any = print) -> dict[str, Any]:
        """One iteration: play ``cfg.games`` games, fit, evaluate when due, checkpoint."""
        t0 = time.time()
        if pool is None:
            xs, rets, stats = play_games(self.numpy_net(), self.cfg, self.rng)
        else:
            xs, rets, stats = play_parallel(self.numpy_net(), self.cfg, self.rng, pool)
        t1 = time.time()
        for group in self.opt.param_groups:
            group["lr"] = self.learning_rate()
        loss = self.fit(xs, rets)
        self.iteration += 1
        self.decisions += int(stats["decisions"])
        self.wall += time.time() - t0
        log(
            f"[td] iteration {self.iteration}: {stats['positions']} positions "
            f"({self.cfg.games / (t1 - t0):.1f} games/s, {stats['decisions'] / (t1 - t0):.0f} decisions/s), "
            f"loss {loss:.4f}, {self.wall:.0f}s"
        )
        if self.cfg.eval_every and self.iteration % self.cfg.eval_every == 0:
            rec = self.evaluate()
            with (self.run_dir / "eval.jsonl").open("a") as f:
                f.write(json.dumps(rec) + "\n")
            key = rec[self.cfg.eval_opponents[0]]["win_rate"]
            log(
                f"[td] eval at {rec['games_played']} games: "
                + ", ".join(f"{o} {rec[o]['win_rate']:.3f}" for o in self.cfg.eval_opponents)
            )
            if key > self.best:
                self.best = key
                self.export(self.run_dir / "best.npz", {"periodic": rec})
        self.save()
        return {**stats, "loss": loss}


def describe(cfg: TDConfig) -> str:
    """One line saying what a run will do."""
    against = ", ".join(cfg.eval_opponents)
    evaluation = f"evaluated every {cfg.eval_every} against {against}" if cfg.eval_every else "no evaluation"
    return (
        f"TD(lambda) self-play, {cfg.players} players, {cfg.iterations} iterations x {cfg.games} games, "
        f"network {cfg.net_arch}, lambda {cfg.lam}, {evaluation}, {cfg.workers} worker(s)"
        + (", targets from the reply search" if cfg.target == "reply" else "")
        + (f", moves by the depth-2 search (width {cfg.search_width})" if cfg.play_depth == 2 else "")
        + (f", starting from {cfg.init}" if cfg.init else ", from random weights")
    )


def train_cli(
    cfg: TDConfig, preset: str | None = None, resume: bool = False, export: Path | None = None
) -> int:
    """Run ``cfg`` as ``shelfie train --algo td`` does: a header, the trainer's log, then the model and
    the command that plays it (or, on Ctrl-C, the command that continues the run); the exit status."""
    import sys

    from shelfie_env.train.checkpoint import copy_model, name_model
    from shelfie_env.train.messages import done_message, interrupted_message

    trainer = TDTrainer(cfg)
    source = f" (config {preset})" if preset else ""
    print(f"[td] {describe(cfg)}{source} -> {cfg.run_dir}", flush=True)
    try:
        run_dir = trainer.run(resume=resume, log=lambda s: print(s, flush=True))
    except (ValueError, FileNotFoundError, FileExistsError) as exc:
        print(f"shelfie train: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        where = None
        if (trainer.run_dir / "latest.pt").is_file():
            done = checkpoint_iteration(trainer.run_dir)
            where = f"after iteration {done} of {cfg.iterations} ({trainer.run_dir / 'latest.pt'})"
        extra = ("--export", str(export)) if export is not None else ()
        print(
            interrupted_message(cfg.run_dir, where, "train", *extra),
            file=sys.stderr,
            flush=True,
        )
        return 130
    latest = run_dir / "latest.npz"
    best = run_dir / "best.npz"
    also = f"; best periodic evaluation: {best}" if best.is_file() else ""
    if export is not None:
        model = copy_model(latest, export)
        print(f"exported {latest} -> {model} and {model.with_suffix('.json')}", flush=True)
    else:
        model = name_model(run_dir, latest)
    trained = f"{trainer.iteration} iterations ({trainer.iteration * cfg.games:,} games)"
    origin = f"{latest.name}: the network when training ended{also}"
    print(done_message("td", trained, run_dir, model, origin, "td", cfg.players), flush=True)
    return 0


def checkpoint_iteration(run_dir: Path) -> int:
    """The iteration of a run's last checkpoint (``latest.pt``, what ``--resume`` continues from)."""
    return int(load_run_state(run_dir / "latest.pt")["iteration"])

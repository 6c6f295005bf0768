"""PPO with an after-state policy, from random weights and no teacher.

The policy scores every legal action by the positions it can lead to: one MLP
values the after-state of each placement a turn can end with (the
``td`` bot's features, :mod:`shelfie_env.bots.learned.afterstate`), and each
action's value follows exactly from those (:mod:`.torch_net`); the
policy is ``softmax(beta * value)`` and the critic its expected value. Each
iteration plays ``games`` whole games on the batched engine
(:mod:`.rollout`: the learner in every seat, or ``greedy`` in a share
``opp_greedy`` of the seats), computes GAE along each seat's decisions, and runs
``epochs`` passes of clipped PPO over minibatches of whole turns (a turn's
after-states are valued once for all its decisions).

It is ``shelfie train``'s default algorithm (``--algo ppo_afterstate``);
``python -m shelfie_env.train.ppo_afterstate ARGS`` is ``shelfie train --algo ppo_afterstate ARGS``::

    shelfie train                                     # the default run, into runs/train
    shelfie train --config ppo_afterstate_2p          # the recipe of the shipped model
    shelfie train --run-dir runs/ppo_as --resume --total-steps 1000000

``run_dir`` holds ``config.json``, ``latest.pt`` (network, optimiser, step count,
random states: ``--resume`` continues exactly), ``latest.npz`` / ``best.npz`` with
their cards (playable as ``ppo:path=...``), ``eval.jsonl`` (arena games against
``greedy`` on the selection deals, dice seeds 10,000,000 + i) and
``progress.jsonl`` (one line per iteration).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from shelfie_env.arena.deals import deal_start
from shelfie_env.bots.learned.afterstate_policy import AfterstatePolicyBot, policy_from_weights
from shelfie_env.bots.learned.card import make_card, write_card
from shelfie_env.train.checkpoint import copy_model, load_run_state, name_model, save_run_state
from shelfie_env.train.ppo_afterstate.config import PPOAfterstateConfig
from shelfie_env.train.ppo_afterstate.rollout import Rollout, gae, play_rollout
from shelfie_env.train.ppo_afterstate.torch_net import (
    AfterstatePolicyNet,
    action_values,
    keep_values,
    policy_logits,
    state_values,
    turn_values,
)

EVAL_SEED = deal_start("selection")
"""Dice seed of evaluation game 0: the selection deals (models are chosen on them, never on ``test``)."""


def _ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(s, e)`` for every pair."""
    lengths = ends - starts
    if lengths.sum() == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return np.arange(lengths.sum()) + offsets


class TurnBatches:
    """A rollout indexed by turn: minibatches of whole turns with their after-states, decisions and pairs."""

    def __init__(self, roll: Rollout, adv: np.ndarray, ret: np.ndarray) -> None:
        self.roll, self.adv, self.ret = roll, adv, ret
        self.order = np.argsort(roll.turn, kind="stable")  # decisions grouped by turn
        n_turns = len(roll.cand_off) - 1
        self.dec_off = np.searchsorted(roll.turn[self.order], np.arange(n_turns + 1))
        self.pair_off = np.searchsorted(roll.pair_dec, np.arange(roll.decisions + 1))
        self.n_turns = n_turns
        self.prox = roll.logp  # log-probabilities the clipping is centred on (see ``update``)

    def batch(self, turns: np.ndarray) -> dict[str, torch.Tensor]:
        r = self.roll
        cand = _ranges(r.cand_off[turns], r.cand_off[turns + 1])
        cand_turn = np.repeat(np.arange(len(turns)), r.cand_off[turns + 1] - r.cand_off[turns])
        dec = self.order[_ranges(self.dec_off[turns], self.dec_off[turns + 1])]
        local_turn = np.repeat(np.arange(len(turns)), self.dec_off[turns + 1] - self.dec_off[turns])
        pairs = _ranges(self.pair_off[dec], self.pair_off[dec + 1])
        pair_local = np.repeat(np.arange(len(dec)), self.pair_off[dec + 1] - self.pair_off[dec])
        rer = np.flatnonzero(r.reroll[dec])
        t = torch.from_numpy
        return {
            "feats": t(r.feats[cand]),
            "over": t(r.over[cand]),
            "exact": t(r.exact[cand]),
            "cand_turn": t(cand_turn),
            "cand_slot": t(r.cand_slot[cand]),
            "n_turns": len(turns),
            "turn": t(local_turn),
            "reroll": t(rer),
            "keep_idx": t(r.keep_idx[dec][rer]),
            "final_idx": t(r.final_idx[dec][rer]),
            "two_rolls": t(r.two_rolls[dec][rer]),
            "pair_dec": t(pair_local),
            "pair_act": t(r.pair_act[pairs]),
            "pair_slot": t(r.pair_slot[pairs]),
            "legal": t(r.legal[dec]),
            "action": t(r.action[dec]),
            "logp": t(r.logp[dec]),
            "prox": t(self.prox[dec]),
            "dec": t(dec),
            "adv": t(self.adv[dec]),
            "ret": t(self.ret[dec]),
        }


def evaluate_policy(net: AfterstatePolicyNet, cfg: PPOAfterstateConfig, games: int) -> dict[str, Any]:
    """Arena games of the deterministic policy against ``greedy`` on the selection deals."""
    from shelfie_env.arena import run_arena
    from shelfie_env.bots import make

    bot = numpy_bot(net, cfg)
    n = cfg.players
    field_bots = {f"greedy#{k}": make("greedy") for k in range(2, n)}
    res = run_arena(
        ["learner", "greedy", *field_bots],
        n,
        games,
        EVAL_SEED,
        workers=1,
        ratings=False,
        bots={"learner": bot, **field_bots},
    )
    if n == 2:
        pair = res["pairings"][0]
        keys = ("games", "wins", "ties", "losses", "win_rate", "win_ci95", "mean_score")
        return {k: pair[k] for k in keys}
    mine = next(b for b in res["bots"] if b["bot"] == "learner")
    return {"games": mine["games"], "win_rate": mine["first_place_rate"], "mean_score": mine["mean_score"]}


def numpy_bot(net: AfterstatePolicyNet, cfg: PPOAfterstateConfig) -> AfterstatePolicyBot:
    """The play-time copy of ``net`` (numpy, deterministic)."""
    card = {"num_players": cfg.players}
    return policy_from_weights(net.numpy_state(cfg.margin_coef), card)


def play_with(cfg: PPOAfterstateConfig, state: dict[str, torch.Tensor], seed: int) -> Rollout:
    """One iteration's games played by a network with weights ``state``, dice and sampling from ``seed``."""
    net = AfterstatePolicyNet(cfg.players, list(cfg.net_arch), cfg.beta)
    net.load_state_dict(state)
    net.eval()
    return play_rollout(
        net, cfg.games, cfg.players, cfg.opp_greedy, cfg.margin_coef, np.random.default_rng(seed)
    )


def _worker_job(cfg: PPOAfterstateConfig, state: dict[str, torch.Tensor], seed: int) -> Rollout:
    torch.set_num_threads(1)
    return play_with(cfg, state, seed)


def _worker_loop(conn: Any, parent: int) -> None:
    """The rollout worker: play each ``(cfg, state, seed)`` received, send back the rollout (or the
    exception), until told to stop. Ctrl-C is left to the trainer (it ends the worker); the worker
    ends itself when the trainer that started it is gone (killed)."""
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(2.0)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        try:
            reply: tuple[bool, Any] = (True, _worker_job(*job))
        except Exception as exc:  # noqa: BLE001 - handed to the trainer, which raises it
            reply = (False, exc)
        conn.send(reply)


class RolloutSource:
    """Plays rollouts in this process, or in one worker process in the background.

    The worker is a process of its own with one pipe to it (no executor, no manager thread), so
    ending it at once (Ctrl-C) can never leave a thread blocked on a half-sent rollout."""

    def __init__(self, cfg: PPOAfterstateConfig) -> None:
        self.cfg = cfg
        self.process: Any = None
        self.conn: Any = None
        self.job: Any = None  # the rollout to play here (no worker)
        self.outstanding = False  # a rollout sent to the worker and not yet received
        if cfg.rollout_worker:
            import multiprocessing as mp
            import signal
            import threading

            ours, theirs = mp.Pipe()
            self.process = mp.get_context("spawn").Process(
                target=_worker_loop, args=(theirs, os.getpid()), name="rollout-worker", daemon=True
            )
            # Started with Ctrl-C ignored, so a Ctrl-C while it boots reaches the trainer alone.
            main = threading.current_thread() is threading.main_thread()
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
            try:
                self.process.start()
            finally:
                if main:
                    signal.signal(signal.SIGINT, previous)
            theirs.close()
            self.conn = ours

    def start(self, state: dict[str, torch.Tensor], seed: int) -> None:
        """Begin the rollout of ``(state, seed)`` (in the worker; here it is played at :meth:`result`)."""
        if self.conn is not None:
            self.conn.send((self.cfg, state, seed))
            self.outstanding = True
        else:
            self.job = (state, seed)

    def result(self) -> Rollout:
        if self.conn is None:
            return play_with(self.cfg, *self.job)
        try:
            ok, value = self.conn.recv()
            self.outstanding = False
        except EOFError:
            self.process.join(5.0)
            raise RuntimeError(
                f"the rollout worker process ended (exit code {self.process.exitcode}) before sending its games"
            ) from None
        if not ok:
            raise value
        return value

    def close(self, wait: bool = True) -> None:
        """Shut the worker down; ``wait=False`` ends it at once, its games unfinished (``wait=True``
        lets it finish them first, and drops them)."""
        if self.process is None:
            return
        if wait and self.process.is_alive():
            try:
                if self.outstanding:
                    self.conn.recv()
                    self.outstanding = False
                self.conn.send(None)
            except (OSError, EOFError):
                pass
            self.process.join(30.0)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(5.0)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5.0)
        self.conn.close()


class PPOAfterstateTrainer:
    """A run in ``cfg.run_dir``: build or resume, iterate, evaluate, checkpoint, export."""

    def __init__(self, cfg: PPOAfterstateConfig, preset: str | None = None) -> None:
        self.cfg = cfg
        self.preset = preset
        self.run_dir = Path(cfg.run_dir)
        torch.manual_seed(cfg.seed)
        self.net = AfterstatePolicyNet(cfg.players, list(cfg.net_arch), cfg.beta)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.learning_rate)
        self.rng = np.random.default_rng(cfg.seed)
        self.steps = 0
        self.iteration = 0
        self.wall = 0.0
        self.best = -float("inf")
        self.next_eval = cfg.eval_every
        # The rollout under way: weights, seed, and whether an update runs before it is used.
        self.pending: tuple[dict[str, torch.Tensor], int, bool] | None = None
        self.source: RolloutSource | None = None

    def _snapshot(self, stale: bool) -> tuple[dict[str, torch.Tensor], int, bool]:
        """The current weights, a fresh rollout seed and ``stale`` (an update runs before the games are used)."""
        state = {k: v.detach().clone() for k, v in self.net.state_dict().items()}
        return state, int(self.rng.integers(1 << 62)), stale

    # ---------------------------------------------------------------- files
    def save(self) -> None:
        save_run_state(
            self.run_dir,
            {
                "model": self.net.state_dict(),
                "opt": self.opt.state_dict(),
                "steps": self.steps,
                "iteration": self.iteration,
                "wall": self.wall,
                "best": self.best,
                "next_eval": self.next_eval,
                "pending": self.pending,
                "preset": self.preset,
                "rng": self.rng.bit_generator.state,
                "torch_rng": torch.get_rng_state(),
                "config": dataclasses.asdict(self.cfg),
            },
        )
        self.export(self.run_dir / "latest.npz", {})

    def load(self) -> None:
        data = load_run_state(self.run_dir / "latest.pt")
        self.net.load_state_dict(data["model"])
        self.opt.load_state_dict(data["opt"])
        for group in self.opt.param_groups:
            group["lr"] = self.cfg.learning_rate
        self.steps, self.iteration, self.wall = data["steps"], data["iteration"], data["wall"]
        self.best, self.next_eval = data["best"], data["next_eval"]
        self.pending = data["pending"]
        self.preset = self.preset or data["preset"]
        self.rng.bit_generator.state = data["rng"]
        torch.set_rng_state(data["torch_rng"])

    def export(self, path: Path, evaluation: dict[str, Any]) -> Path:
        """The policy as ``path`` (``.npz``) plus its card (``teacher`` none); plays as ``ppo:path=...``."""
        path = Path(path).with_suffix(".npz")
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.stem + ".tmp.npz")
        np.savez_compressed(tmp, **self.net.numpy_state(self.cfg.margin_coef))
        tmp.replace(path)
        card = make_card(
            self.cfg.players,
            algo="PPO (after-state policy)",
            config=dataclasses.asdict(self.cfg),
            steps=self.steps,
            wall_time_s=self.wall,
            evaluation=evaluation,
            extra={
                "teacher": "none",
                "bot": "ppo",
                "policy_head": "afterstate",
                "preset": self.preset,
                "train_command": train_command(self.cfg),
            },
        )
        write_card(path, card)
        return path

    # --------------------------------------------------------------- update
    def _forward(self, b: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """Action values and log-probabilities of every legal action of a minibatch's decisions."""
        out = self.net(b["feats"])
        v = turn_values(out, b["over"], b["exact"], b["cand_turn"], b["cand_slot"], b["n_turns"])
        q = action_values(
            v,
            keep_values(v),
            b["turn"],
            b["reroll"],
            b["keep_idx"],
            b["final_idx"],
            b["two_rolls"],
            b["pair_dec"],
            b["pair_act"],
            b["pair_slot"],
        )
        return q, torch.log_softmax(policy_logits(q, b["legal"], self.net.beta), 1)

    def proximal_logp(self, batches: TurnBatches) -> np.ndarray:
        """Log-probabilities of the actions taken under the weights as they are now (no gradient)."""
        out = np.zeros(batches.roll.decisions, dtype=np.float32)
        turns = np.arange(batches.n_turns)
        with torch.no_grad():
            for i in range(0, len(turns), 4 * self.cfg.turns_per_batch):
                b = batches.batch(turns[i : i + 4 * self.cfg.turns_per_batch])
                _, logp_all = self._forward(b)
                out[b["dec"].numpy()] = logp_all.gather(1, b["action"][:, None])[:, 0].numpy()
        return out

    def update(self, roll: Rollout, stale: bool = False) -> dict[str, float]:
        """``epochs`` passes of clipped PPO over minibatches of whole turns.

        ``stale``: the games were played by older weights (the rollout worker). The ratio is
        then clipped around the policy at the start of this update and weighted by its
        importance ratio to the policy that played, ``min(pi_prox / pi_behaviour, 2)``
        (decoupled PPO objective; Hilton et al. 2021).
        """
        cfg = self.cfg
        adv, ret = gae(roll, cfg.gamma, cfg.gae_lambda)
        batches = TurnBatches(roll, adv, ret)
        prox = self.proximal_logp(batches) if stale else roll.logp
        batches.prox = prox
        stats: dict[str, list[float]] = {
            k: [] for k in ("pg", "vf", "entropy", "clipfrac", "kl", "offpolicy")
        }
        for _ in range(cfg.epochs):
            perm = self.rng.permutation(batches.n_turns)
            for i in range(0, len(perm), cfg.turns_per_batch):
                b = batches.batch(np.sort(perm[i : i + cfg.turns_per_batch]))
                q, logp_all = self._forward(b)
                probs = logp_all.exp()
                logp = logp_all.gather(1, b["action"][:, None])[:, 0]
                values = state_values(q, b["legal"], probs)
                a = b["adv"]
                a = (a - a.mean()) / (a.std() + 1e-8) if len(a) > 1 else a
                weight = (b["prox"] - b["logp"]).exp().clamp(max=2.0)
                ratio = (logp - b["prox"]).exp()
                clipped = ratio.clamp(1 - cfg.clip_range, 1 + cfg.clip_range)
                pg = -(weight * torch.min(ratio * a, clipped * a)).mean()
                vf = ((values - b["ret"]) ** 2).mean()
                ent = -(probs * torch.where(b["legal"], logp_all, torch.zeros_like(logp_all))).sum(1).mean()
                loss = pg + cfg.vf_coef * vf - cfg.ent_coef * ent
                self.opt.zero_grad()
                loss.backward()
                if cfg.max_grad_norm > 0:
                    torch.nn.utils.clip_grad_norm_(self.net.parameters(), cfg.max_grad_norm)
                self.opt.step()
                with torch.no_grad():
                    stats["pg"].append(float(pg))
                    stats["vf"].append(float(vf))
                    stats["entropy"].append(float(ent))
                    stats["clipfrac"].append(float(((ratio - 1).abs() > cfg.clip_range).float().mean()))
                    stats["kl"].append(float((b["prox"] - logp).mean()))
                    stats["offpolicy"].append(float((b["logp"] - b["prox"]).abs().mean()))
        return {k: float(np.mean(v)) for k, v in stats.items()}

    # ------------------------------------------------------------------ loop
    def iterate(self, log: Any = print) -> dict[str, Any]:
        """One iteration: take the rollout under way, start the next, update, log; evaluate when due; checkpoint."""
        cfg = self.cfg
        if self.source is None:
            self.source = RolloutSource(cfg)
        t0 = time.perf_counter()
        if self.pending is None:
            self.pending = self._snapshot(stale=False)
            self.source.start(*self.pending[:2])
        roll = self.source.result()
        stale = self.pending is not None and self.pending[2]
        self.pending = None
        if cfg.rollout_worker and self.steps + roll.decisions < cfg.total_steps:
            self.pending = self._snapshot(stale=True)  # the next games, played while this update runs
            self.source.start(*self.pending[:2])
        t1 = time.perf_counter()
        self.net.train()
        upd = self.update(roll, stale=stale)
        t2 = time.perf_counter()
        self.iteration += 1
        self.steps += roll.decisions
        self.wall += t2 - t0
        rec = {
            "iteration": self.iteration,
            "steps": self.steps,
            "wall_s": round(self.wall, 1),
            "rollout_wait_s": round(t1 - t0, 2),
            "update_s": round(t2 - t1, 2),
            "steps_per_s": round(roll.decisions / (t2 - t0), 1),
            "update_steps_per_s": round(roll.decisions * cfg.epochs / (t2 - t1), 1),
            "beta": round(float(self.net.beta.detach()), 3),
            **{k: round(v, 5) if isinstance(v, float) else v for k, v in roll.stats.items()},
            **{k: round(v, 5) for k, v in upd.items()},
        }
        with (self.run_dir / "progress.jsonl").open("a") as f:
            f.write(json.dumps(rec) + "\n")
        log(
            f"[ppo-as] it {self.iteration} steps {self.steps}: {rec['steps_per_s']:.0f} steps/s "
            f"(waited {rec['rollout_wait_s']}s for games, update {rec['update_s']}s), train win vs greedy "
            f"{roll.stats['train_win_vs_greedy']:.3f}, beta {rec['beta']}, vf {upd['vf']:.4f}, "
            f"ent {upd['entropy']:.3f}, clip {upd['clipfrac']:.3f}"
        )
        done = self.steps >= cfg.total_steps
        if cfg.eval_games and ((cfg.eval_every and self.steps >= self.next_eval) or done):
            self.evaluate(log)
            while cfg.eval_every and self.next_eval <= self.steps:
                self.next_eval += cfg.eval_every
        self.save()
        return rec

    def evaluate(self, log: Any = print) -> dict[str, Any]:
        t0 = time.perf_counter()
        res = evaluate_policy(self.net, self.cfg, self.cfg.eval_games)
        rec = {"steps": self.steps, "iteration": self.iteration, "wall_s": round(self.wall, 1), "greedy": res}
        with (self.run_dir / "eval.jsonl").open("a") as f:
            f.write(json.dumps(rec) + "\n")
        log(
            f"[eval] steps={self.steps} win_rate_vs_greedy={res['win_rate']:.3f} "
            f"({res['games']} games, selection deals, {time.perf_counter() - t0:.0f}s)"
        )
        if res["win_rate"] > self.best:
            self.best = res["win_rate"]
            self.export(self.run_dir / "best.npz", {"periodic": rec})
        return rec

    def run(self, resume: bool = False, log: Any = print) -> Path:
        """Train until ``cfg.total_steps``; returns the run directory."""
        torch.set_num_threads(self.cfg.threads)
        if resume:
            if not (self.run_dir / "latest.pt").is_file():
                raise FileNotFoundError(f"--resume: no {self.run_dir / 'latest.pt'}")
            self.load()
            log(f"[ppo-as] resumed {self.run_dir} at {self.steps} steps")
        elif (self.run_dir / "latest.pt").exists():
            raise FileExistsError(
                f"{self.run_dir} already holds a run; pass --resume or choose another --run-dir"
            )
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "config.json").write_text(json.dumps(dataclasses.asdict(self.cfg), indent=2) + "\n")
        self.source = RolloutSource(self.cfg)
        try:
            if (
                self.pending is not None
            ):  # resumed with a rollout under way: play it again, same weights and seed
                self.source.start(*self.pending[:2])
            while self.steps < self.cfg.total_steps:
                self.iterate(log)
        finally:
            self.source.close(wait=sys.exc_info()[0] is None)
            self.source = None
        return self.run_dir


def train_command(cfg: PPOAfterstateConfig) -> str:
    """The ``shelfie train`` command line that reproduces ``cfg`` (every field)."""
    from shelfie_env.train.messages import config_flags

    return f"shelfie train --algo ppo_afterstate {config_flags(dataclasses.asdict(cfg))}"


def describe(cfg: PPOAfterstateConfig) -> str:
    """One line saying what a run will do."""
    if not cfg.eval_games:
        evaluation = "no evaluation"
    else:
        when = f"every {cfg.eval_every:,} steps and at the end" if cfg.eval_every else "at the end"
        evaluation = f"evaluated against greedy {when} ({cfg.eval_games} games, selection deals)"
    seats = f", greedy in {cfg.opp_greedy:.0%} of the seats" if cfg.opp_greedy else ""
    return (
        f"PPO with the after-state policy, {cfg.players} players, {cfg.total_steps:,} steps from random "
        f"weights (no teacher), network {list(cfg.net_arch)}, {cfg.games} games per iteration{seats}, {evaluation}"
    )


def checkpoint_steps(run_dir: Path) -> int | None:
    """The step count of a run's last checkpoint (``latest.pt``, what ``--resume`` continues from)."""
    latest = Path(run_dir) / "latest.pt"
    if not latest.is_file():
        return None
    return int(load_run_state(latest)["steps"])


def evaluations(run_dir: Path) -> list[dict[str, Any]]:
    """Every evaluation of a run (``eval.jsonl``), oldest first."""
    log = Path(run_dir) / "eval.jsonl"
    if not log.is_file():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def _win_rate(rec: dict[str, Any]) -> str:
    res = rec["greedy"]
    return f"{res['win_rate']:.1%} against greedy in {res['games']} games on the selection deals, at {rec['steps']:,} steps"


def done_message(cfg: PPOAfterstateConfig, run_dir: Path, steps: int, model: Path, source: Path) -> str:
    """The last lines of a run: steps trained, the model file, its evaluation and the command that plays it."""
    from shelfie_env.train import messages as console

    evals = evaluations(run_dir)
    if source.stem == "best" and evals:
        best = max(evals, key=lambda r: r["greedy"]["win_rate"])  # the first of equals, as the trainer keeps
        what = f"the best periodic evaluation: {_win_rate(best)}"
        if evals[-1] is not best:
            what += f"; the last: {_win_rate(evals[-1])}"
    else:
        what = "the network when training ended"
    origin = f"{source.name}: {what}" if model != source else what
    return console.done_message("train", f"{steps:,} steps", run_dir, model, origin, "ppo", cfg.players)


def interrupted_message(cfg: PPOAfterstateConfig, export: Path | None) -> str:
    """What Ctrl-C prints: where the run stands and the command that continues it."""
    from shelfie_env.train import messages as console

    run_dir = Path(cfg.run_dir)
    steps = checkpoint_steps(run_dir)
    where = None if steps is None else f"at {steps:,} steps ({run_dir / 'latest.pt'})"
    extra = ("--export", str(export)) if export is not None else ()
    return console.interrupted_message(run_dir, where, "train", *extra)


def train_cli(
    cfg: PPOAfterstateConfig,
    preset: str | None = None,
    resume: bool = False,
    export: Path | None = None,
) -> int:
    """Run ``cfg`` as ``shelfie train`` does: a header, the trainer's log, then the model and the
    command that plays it (or, on Ctrl-C, the command that continues the run); returns the exit status."""
    run_dir = Path(cfg.run_dir)
    if resume and not (run_dir / "latest.pt").is_file():
        print(f"shelfie train: error: --resume: no checkpoint {run_dir / 'latest.pt'}", file=sys.stderr)
        return 2
    source = f" (config {preset})" if preset else ""
    print(f"[train] {describe(cfg)}{source} -> {run_dir}", flush=True)
    trainer = PPOAfterstateTrainer(cfg, preset)
    try:
        trainer.run(resume=resume, log=lambda s: print(s, flush=True))
    except (FileExistsError, FileNotFoundError, ValueError) as exc:
        print(f"shelfie train: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(interrupted_message(cfg, export), file=sys.stderr, flush=True)
        return 130
    best = run_dir / "best.npz"
    source_model = best if best.is_file() else run_dir / "latest.npz"
    model = source_model
    if export is not None:
        model = copy_model(source_model, export)
        print(f"exported {source_model} -> {model} and {model.with_suffix('.json')}", flush=True)
    else:
        model = name_model(run_dir, source_model)
    print(done_message(cfg, run_dir, trainer.steps, model, source_model), flush=True)
    return 0

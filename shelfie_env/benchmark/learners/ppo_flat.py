"""``ppo_flat``: the package's masked PPO with a flat policy head (:mod:`shelfie_env.train.ppo_flat`).

Its own recipe (:class:`~shelfie_env.train.ppo_flat.ppo.PPOFlatConfig`: 256 games x 32 decisions an
iteration, minibatches of 2,048, 4 epochs, separate 2 x 256 tanh actor and critic, ``obs="features"``) on the
batched engine in this process, against the protocol's opponents (``random`` or ``greedy``, 1/2 each, no
snapshots). The run's settings map to its fields (``net_arch``, ``ent_coef`` for both of its entropy
coefficients, ``margin_coef``, ``score_reward``, ``reroll`` ``ids``/``keep``, ``obs``, the opponent mix) and
``--flat FIELD=VALUE`` sets any other field. Its trainer writes ``latest.pt`` (the whole run) into the run
folder after every iteration; a resumed run continues exactly from it (``Trainer.resume``). The learning
curve is the benchmark's (:class:`~shelfie_env.arena.rows.Curve`, kept in ``bench_curve.json``).
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
import typing
from pathlib import Path
from typing import Any

from shelfie_env.benchmark.ablations import TRAIN_MIXES
from shelfie_env.benchmark.learners import Run, Trained

FIXED = ("players", "total_steps", "seed", "run_dir", "eval_every", "eval_games")
"""Fields the benchmark sets itself (``--flat`` cannot)."""
CURVE = "bench_curve.json"


def flat_fields() -> dict[str, Any]:
    """The fields ``--flat`` may set, with their types."""
    from shelfie_env.train.ppo_flat.ppo import PPOFlatConfig

    hints = typing.get_type_hints(PPOFlatConfig)
    return {f.name: hints[f.name] for f in dataclasses.fields(PPOFlatConfig) if f.name not in FIXED}


def parse_flat(items: list[str]) -> dict[str, Any]:
    """``["stop_bias=4", "net_arch=128x128"]`` -> typed fields; ``ValueError`` names a bad item."""
    fields = flat_fields()
    out: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in fields:
            raise ValueError(
                f"expected FIELD=VALUE with FIELD one of {', '.join(sorted(fields))}, got {item!r}"
            )
        hint = fields[name]
        try:
            if typing.get_origin(hint) is list:
                out[name] = [int(v) for v in text.replace(",", "x").split("x") if v]
            elif hint is bool:
                out[name] = {"true": True, "false": False}[text.strip().lower()]
            else:
                out[name] = hint(text)
        except (KeyError, ValueError):
            raise ValueError(f"{name}: expected a {getattr(hint, '__name__', hint)}, got {text!r}") from None
    return out


def config(run: Run, run_dir: Path) -> Any:
    """The :class:`PPOFlatConfig` of ``run``."""
    from shelfie_env.train.ppo_flat.ppo import PPOFlatConfig

    s = run.settings
    p_random, p_greedy = TRAIN_MIXES[s["train_opponents"]]
    fields: dict[str, Any] = {
        "net_arch": list(s["net_arch"]),
        "ent_coef": s["ent_coef"],
        "ent_coef_reroll": s["ent_coef"],
        "margin_coef": s["margin_coef"],
        "score_reward": s["score_reward"],
        "reroll": s["reroll"],
        "obs": s["obs"],
        "opp_random": p_random,
        "opp_greedy": p_greedy,
        **run.flat,
    }
    cfg = PPOFlatConfig(
        players=run.players, total_steps=run.steps, seed=run.seed, eval_every=0, run_dir=str(run_dir), **fields
    )
    cfg.check()
    return cfg


def train(run: Run) -> Trained | None:
    import torch

    from shelfie_env.bots.learned.bot import PPOBot
    from shelfie_env.train.ppo_flat.ppo import Trainer, export_agent

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = run.run_dir if run.run_dir is not None else Path(tmp)
        cfg = config(run, run_dir)
        latest = run_dir / "latest.pt"
        curve = run.curve
        if run.resume and latest.is_file():
            trainer = Trainer.resume(latest)
            if dataclasses.asdict(trainer.config) != dataclasses.asdict(cfg):
                raise ValueError(f"{latest}: a checkpoint of another run; resume with the same options")
            if (run_dir / CURVE).is_file():
                curve.load_state(json.loads((run_dir / CURVE).read_text(encoding="utf-8")))
            print(json.dumps({"resumed": str(latest), "decisions": trainer.global_step}), flush=True)
        else:
            trainer = Trainer(cfg)
        curve_model = Path(tmp) / "curve_model"

        def bot() -> PPOBot:
            path = export_agent(trainer.agent, cfg, curve_model, trainer.global_step, trainer.train_s, [])
            return PPOBot.load(path, num_players=run.players)

        start = trainer.global_step
        batch = cfg.batch_size
        every = max(run.checkpoint_every, batch) if run.checkpoint_every else None
        while not trainer.finished:
            # one call trains up to the next curve point, checkpoint mark or stop, in whole iterations
            marks = [trainer.iterations * batch]
            if curve.every or curve.marks:
                marks.append(curve.next)
            if every:
                marks.append((trainer.global_step // every + 1) * every)
            if run.stop_after is not None:
                marks.append(start + run.stop_after)
            iterations = max(1, -(-(min(marks) - trainer.global_step) // batch))
            trainer.train(log_every=10**9, out=lambda line: None, stop_after=iterations)
            if curve.due(trainer.global_step) and not trainer.finished:
                curve.add(trainer.global_step, bot())
            (run_dir / CURVE).write_text(json.dumps(curve.state()), encoding="utf-8")
            if run.stop_after is not None and trainer.global_step >= start + run.stop_after:
                if not trainer.finished:
                    return None
        final = bot()
        curve.add(trainer.global_step, final, final=True)
        if run.save is not None:
            name = run.export_name()
            path = export_agent(
                trainer.agent, cfg, run.save / name, trainer.global_step, trainer.train_s, curve.points
            )
            print(json.dumps({"saved": str(path)}), flush=True)
        return Trained(
            final,
            trainer.train_s,
            trainer.global_step,
            {"ppo_flat": dataclasses.asdict(cfg) | {"run_dir": None}},
        )

"""How closely a network plays like the planner, by decision type, in the planner's own values.

    python scripts/policy_regret.py models/ppo_2p.zip runs/ppo_2p_s/best.zip --games 300

Records ``--games`` planner-vs-planner 2-player games (every decision with the
planner's value of each legal action, ``shelfie_env.train.bc.record_games``), lets each
checkpoint choose (deterministic: its most likely legal action) in every
recorded position, and prints per decision type (reroll phase, circle phase,
cross phase):

* ``agree``: same action id as the planner's choice;
* ``top``: an action the planner values as highly as its choice (ties count);
* ``regret``: mean planner value lost (units: about 10 x win-minus-loss chance),
  and the share of the total regret.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from shelfie_env.game.actions import CIRCLE_BASE, CROSS_BASE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("checkpoints", nargs="+", type=Path, help="2-player MaskablePPO .zip files")
    parser.add_argument("--games", type=int, default=300, help="planner games to record")
    parser.add_argument("--seed", type=int, default=424242, help="dice seed of the recorded games")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    for path in args.checkpoints:
        if not path.is_file():
            parser.error(f"no checkpoint file {path}")

    from shelfie_env.bots.learned.policy import NumpyPolicy
    from shelfie_env.train.checkpoint import load_model
    from shelfie_env.train.bc import record_games

    data = record_games(
        2, args.games, "planner", args.seed, gamma=0.995, margin_coef=0.1, solo_reward_scale=0.02
    )
    masks, values, labels = data["masks"], data["values"], data["actions"]
    rows = np.arange(len(labels))
    kinds = {
        "reroll": masks[:, :CIRCLE_BASE].any(axis=1),
        "circle": masks[:, CIRCLE_BASE:CROSS_BASE].any(axis=1),
        "cross": masks[:, CROSS_BASE:].any(axis=1),
    }
    print(f"{len(labels)} planner decisions from {args.games} games (seed {args.seed})")
    for path in args.checkpoints:
        model, _ = load_model(path, num_players=2)
        policy = NumpyPolicy.from_sb3(model.policy)
        choice = policy.act_many(data["obs"], masks)
        regret = values[rows, labels] - values[rows, choice]
        total = max(float(regret.sum()), 1e-12)
        print(f"{path}:")
        for name, sel in kinds.items():
            if not sel.any():
                continue
            print(
                f"  {name:<6} {sel.sum():>6} decisions  agree {np.mean(choice[sel] == labels[sel]):.3f}  "
                f"top {np.mean(regret[sel] <= 1e-6):.3f}  regret {regret[sel].mean():.4f} "
                f"({regret[sel].sum() / total:.0%} of the total)"
            )
        print(
            f"  all    {len(labels):>6} decisions  top {np.mean(regret <= 1e-6):.3f}"
            f"  regret {regret.mean():.4f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

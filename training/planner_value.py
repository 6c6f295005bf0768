"""Fit the planner's learned win-chance evaluation (:mod:`shelfie_env.planner.value_model`).

    python -m training.planner_value gen --games 12000 --out runs/value/data.npz
    python -m training.planner_value fit --data runs/value/data.npz --out models/planner_value.npz

``gen`` plays seat-rotated 2-player games of the planner against ``greedy``
and records, after every planner turn, the features of the shelves the turn
ended with (valued from the turn's start, as the search values them) and
whether the planner went on to win (1, tie 0.5, 0). ``fit`` trains a small
MLP on them with a held-out split of whole games and writes numpy weights.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np


def _play(args: tuple[int, int, dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    first, count, weights = args
    from shelfie_env.bots import act_on_game, make
    from shelfie_env.engine import Game
    from shelfie_env.planner.evaluation import Context, Weights
    from shelfie_env.planner.value_model import features

    planner = make("planner", **weights)
    greedy = make("greedy")
    xs, ys, margins, games = [], [], [], []
    for i in range(first, first + count):
        seat = i % 2
        bots = [planner, greedy] if seat == 0 else [greedy, planner]
        game = Game.new(2, rng=1_000_000 + i // 2)
        rows = []
        while not game.over:
            p = game.current
            if p == seat:
                ctx = Context(game.clone(), Weights(**{**Weights().__dict__, **weights}))
                while not game.over and game.current == p:
                    game.step(act_on_game(planner, game))
                rows.append(features(ctx, np.array([game.circled[p]]), np.array([game.crossed[p]]))[0])
            else:
                game.step(act_on_game(bots[p], game))
        s = game.scores()
        label = 1.0 if s[seat] > s[1 - seat] else 0.5 if s[seat] == s[1 - seat] else 0.0
        xs.extend(rows)
        ys.extend([label] * len(rows))
        margins.extend([s[seat] - s[1 - seat]] * len(rows))
        games.extend([i] * len(rows))
    return (
        np.array(xs, dtype=np.float32),
        np.array(ys, dtype=np.float32),
        np.array(margins, dtype=np.float32),
        np.array(games, dtype=np.int64),
    )


def gen(args: argparse.Namespace) -> int:
    chunk = 100
    jobs = [(args.first + k, min(chunk, args.games - k), json.loads(args.weights)) for k in range(0, args.games, chunk)]
    t0 = time.perf_counter()
    parts = []
    with ProcessPoolExecutor(args.workers) as pool:
        for n, part in enumerate(pool.map(_play, jobs), 1):
            parts.append(part)
            print(f"\r{n * chunk}/{args.games} games, {time.perf_counter() - t0:.0f} s", end="", flush=True)
    print()
    x, y, m, g = (np.concatenate([p[k] for p in parts]) for k in range(4))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, x=x, y=y, margin=m, game=g)
    print(f"saved {len(y)} positions from {args.games} games to {args.out} (win rate {y.mean():.3f})")
    return 0


def fit(args: argparse.Namespace) -> int:
    import torch

    from shelfie_env.planner.value_model import FEATURE_VERSION

    torch.manual_seed(args.seed)
    data = [np.load(p) for p in args.data]
    x = np.concatenate([d["x"] for d in data])
    if args.features:
        x = x[:, : args.features]
    y = np.concatenate([d["y"] for d in data])
    g = np.concatenate([d["game"] + 10_000_000 * k for k, d in enumerate(data)])
    held = (g % 10) == 0  # whole games held out
    mean = x[~held].mean(axis=0)
    std = x[~held].std(axis=0) + 1e-3
    xt = torch.tensor((x - mean) / std, dtype=torch.float32)
    yt = torch.tensor(y, dtype=torch.float32)
    tr, va = torch.tensor(~held), torch.tensor(held)
    sizes = [x.shape[1], *args.hidden, 1]
    layers: list[torch.nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
        if args.dropout > 0:
            layers.append(torch.nn.Dropout(args.dropout))
    net = torch.nn.Sequential(*layers[: -2 if args.dropout > 0 else -1])
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    xtr, ytr, xva, yva = xt[tr], yt[tr], xt[va], yt[va]

    # Baseline: a logistic regression on the hand-built margin alone (feature 0).
    base = torch.nn.Linear(1, 1)
    bopt = torch.optim.LBFGS(base.parameters(), max_iter=200)

    def closure() -> torch.Tensor:
        bopt.zero_grad()
        loss = loss_fn(base(xtr[:, :1]).squeeze(1), ytr)
        loss.backward()
        return loss

    bopt.step(closure)
    with torch.no_grad():
        base_va = float(loss_fn(base(xva[:, :1]).squeeze(1), yva))
    print(f"held-out log-loss, logistic on the hand-built margin: {base_va:.4f}")
    best, best_state = float("inf"), None
    for epoch in range(args.epochs):
        perm = torch.randperm(len(ytr))
        net.train()
        for k in range(0, len(perm), args.batch):
            idx = perm[k : k + args.batch]
            opt.zero_grad()
            loss = loss_fn(net(xtr[idx]).squeeze(1), ytr[idx])
            loss.backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            va_loss = float(loss_fn(net(xva).squeeze(1), yva))
        if va_loss < best:
            best, best_state = va_loss, {k: v.clone() for k, v in net.state_dict().items()}
        print(f"epoch {epoch + 1}: held-out log-loss {va_loss:.4f} (best {best:.4f})")
    assert best_state is not None
    net.load_state_dict(best_state)
    out = {"mean": mean, "std": std, "feature_version": np.array(FEATURE_VERSION)}
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    for i, lin in enumerate(linears):
        out[f"w{i}"] = lin.weight.detach().numpy().T.astype(np.float64)
        out[f"b{i}"] = lin.bias.detach().numpy().astype(np.float64)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    np.savez(args.out, **out)
    print(f"saved {args.out}: held-out log-loss {best:.4f} vs {base_va:.4f} for the margin alone")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("gen", help="record positions from planner-vs-greedy games")
    a.add_argument("--games", type=int, default=12000)
    a.add_argument("--first", type=int, default=0, help="first game index (seeds follow from it)")
    a.add_argument("--workers", type=int, default=2)
    a.add_argument("--weights", default="{}", help="JSON planner weight overrides for the recorded games")
    a.add_argument("--out", required=True)
    b = sub.add_parser("fit", help="fit the MLP")
    b.add_argument("--data", nargs="+", required=True)
    b.add_argument("--out", required=True)
    b.add_argument("--hidden", type=int, nargs="*", default=[64, 32])
    b.add_argument("--epochs", type=int, default=30)
    b.add_argument("--batch", type=int, default=512)
    b.add_argument("--lr", type=float, default=1e-3)
    b.add_argument("--weight-decay", type=float, default=1e-3)
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--features", type=int, default=0, help="use only the first N features (0: all)")
    b.add_argument("--dropout", type=float, default=0.0)
    args = p.parse_args(argv)
    if args.cmd == "gen" and (args.games < 1 or args.workers < 1):
        p.error("--games and --workers must be >= 1")
    return gen(args) if args.cmd == "gen" else fit(args)


if __name__ == "__main__":
    sys.exit(main())

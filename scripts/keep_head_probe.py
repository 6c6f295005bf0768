"""Probe: can a policy head that sees the *kept multiset* of each reroll imitate the planner better?

    python scripts/keep_head_probe.py runs/teacher/planner_2p_6000g_seed1_g0.995_m0.1_s0.02_q.npz --epochs 6
    python scripts/keep_head_probe.py runs/teacher/...q.npz --models expect

Reroll ids name positions of the sorted dice (SPEC §6), so a flat 64-logit head
must work out which faces each id keeps. This trains two actors on the reroll
decisions of planner teacher data with action values (``--bc-soft-tau`` runs
cache it under ``runs/teacher/*_q.npz``), both fitted to ``softmax(values / tau)``:

* ``flat``: observation -> 512 -> 512 -> 64 logits (the shape of the shipped policy);
* ``keep``: observation -> 512 -> 256 embedding, plus a 42-dim one-hot of the
  face counts each reroll id keeps (6 faces x 0..6 dice) -> one shared scorer
  -> a logit per id;
* ``expect`` (``--models expect``): observation -> 512 -> 512 -> a value for each of the
  462 final dice multisets, and each reroll id valued by the exact expectation of those
  values over the rolls left (``planner.dice`` tables), stop by the value of the dice now.

and prints, per epoch, on the reroll decisions of ``--heldout-games`` fresh planner
games: the share of choices the planner values as its best and the mean planner
value lost (regret). Not part of the package: the experiment behind ``shelfie train --policy-head keep``
(``training/policy.py``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from shelfie_env.keep_head import DICE_SIZE, keep_features
from shelfie_env.observation import block_start

DICE = block_start("dice_onehot", 2)  # sorted-dice one-hot
TWO_ROLLS = block_start("rolls_left", 2) + 2  # "two rolls left" flag


def reroll_rows(data: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    """(obs, masks, values, actions, keep features) of the reroll-phase decisions."""
    sel = data["masks"][:, :64].any(axis=1)
    obs, masks = data["obs"][sel], data["masks"][sel][:, :64]
    values, actions = data["values"][sel][:, :64], data["actions"][sel]
    return obs, masks, values, actions, keep_features(obs[:, DICE : DICE + DICE_SIZE])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("teacher", type=Path, help="teacher data .npz with a 'values' array")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--tau", type=float, default=0.05)
    parser.add_argument("--heldout-games", type=int, default=300)
    parser.add_argument("--seed", type=int, default=424242, help="dice seed of the held-out games")
    parser.add_argument(
        "--models",
        default="keep,flat",
        help="comma-separated subset of keep, flat, expect (default keep,flat)",
    )
    args = parser.parse_args(argv)
    models = args.models.split(",")
    if not models or not set(models) <= {"keep", "flat", "expect"}:
        parser.error(f"--models takes keep, flat and/or expect, got {args.models!r}")
    if not args.teacher.is_file():
        parser.error(f"no teacher data {args.teacher}")

    import torch

    from training.bc import record_games, soft_targets

    with np.load(args.teacher) as f:
        if "values" not in f.files:
            parser.error(f"{args.teacher} has no action values (record it with --bc-soft-tau > 0)")
        train = reroll_rows({k: f[k] for k in f.files})
    test = reroll_rows(record_games(2, args.heldout_games, "planner", args.seed, 0.995, 0.1, 0.02))
    print(f"{len(train[0])} reroll decisions to fit, {len(test[0])} held out", flush=True)
    torch.manual_seed(0)
    size = train[0].shape[1]

    class Flat(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            t, lin = torch.nn.Tanh, torch.nn.Linear
            self.net = torch.nn.Sequential(lin(size, 512), t(), lin(512, 512), t(), lin(512, 64))

        def forward(self, obs, keep):  # type: ignore[no-untyped-def]
            return self.net(obs)

    class Keep(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            t, lin = torch.nn.Tanh, torch.nn.Linear
            self.embed = torch.nn.Sequential(lin(size, 512), t(), lin(512, 256), t())
            self.keep = lin(42, 256)
            self.score = torch.nn.Sequential(t(), lin(256, 128), t(), lin(128, 1))

        def forward(self, obs, keep):  # type: ignore[no-untyped-def]
            return self.score(self.embed(obs)[:, None, :] + self.keep(keep)).squeeze(-1)

    from shelfie_env.planner.dice import FINAL, KEEP, PAD, SUB_KEEPS, TRANSITION

    powers = 7 ** np.arange(6)
    keep_of_code = np.zeros(7**6, np.int64)
    keep_of_code[KEEP @ powers] = np.arange(len(KEEP))
    final_of_code = np.zeros(7**6, np.int64)
    final_of_code[FINAL @ powers] = np.arange(len(FINAL))

    class Expect(torch.nn.Module):
        """Learns V0(final dice | position) for the 462 final multisets; the reroll ids are then
        valued by the exact expectimax over the rolls left (the planner's own recursion)."""

        def __init__(self) -> None:
            super().__init__()
            t, lin = torch.nn.Tanh, torch.nn.Linear
            self.net = torch.nn.Sequential(lin(size, 512), t(), lin(512, 512), t(), lin(512, len(FINAL)))
            self.register_buffer("trans_t", torch.as_tensor(TRANSITION.T.astype(np.float32)))
            self.register_buffer("sub", torch.as_tensor(SUB_KEEPS))
            self.register_buffer("keep_of_code", torch.as_tensor(keep_of_code))
            self.register_buffer("final_of_code", torch.as_tensor(final_of_code))
            self.register_buffer("powers", torch.as_tensor(powers))

        def forward(self, obs, keep):  # type: ignore[no-untyped-def]
            v0 = self.net(obs)  # (B, 462)
            ev1 = v0 @ self.trans_t  # (B, 924): one roll left
            padded = torch.cat([ev1, torch.full_like(ev1[:, :1], -1e9)], dim=1)
            v1 = padded[:, self.sub].max(dim=2).values  # (B, 462): best keep with a roll to come
            ev2 = v1 @ self.trans_t
            two = obs[:, TWO_ROLLS : TWO_ROLLS + 1] > 0.5
            ev = torch.where(two, ev2, ev1)
            codes = (keep.reshape(len(obs), 64, 6, 7).argmax(dim=3) * self.powers).sum(dim=2)  # (B, 64)
            logits = ev.gather(1, self.keep_of_code[codes])
            stop = v0.gather(1, self.final_of_code[codes[:, :1]])  # id 0 keeps every die: V0 now
            return torch.cat([stop, logits[:, 1:]], dim=1)

    assert PAD == len(KEEP)
    obs, masks, _, _, feats = (torch.as_tensor(a) for a in train)
    target = torch.as_tensor(soft_targets(train[2], train[1], args.tau))
    t_obs, t_masks, t_values, t_actions, t_feats = test
    rows = np.arange(len(t_actions))
    for model_cls in [{"keep": Keep, "flat": Flat, "expect": Expect}[m] for m in models]:
        net = model_cls()
        opt = torch.optim.Adam(net.parameters(), 1e-3)
        rng = np.random.default_rng(0)
        for epoch in range(args.epochs):
            t0 = time.time()
            for batch in np.array_split(rng.permutation(len(obs)), max(1, len(obs) // 512)):
                logits = net(obs[batch], feats[batch]).masked_fill(~masks[batch], -1e9)
                loss = -(target[batch] * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
            with torch.no_grad():
                logits = net(torch.as_tensor(t_obs), torch.as_tensor(t_feats))
                choice = logits.masked_fill(~torch.as_tensor(t_masks), -1e9).argmax(dim=1).numpy()
            regret = t_values[rows, t_actions] - t_values[rows, choice]
            print(
                f"{model_cls.__name__.lower():<4} epoch {epoch + 1}: "
                f"top-valued {np.mean(regret <= 1e-6):.3f}, "
                f"regret {regret.mean():.4f} ({time.time() - t0:.0f}s)",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

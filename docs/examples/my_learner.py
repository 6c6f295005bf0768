"""Your own learner in the benchmark table: REINFORCE with a linear softmax policy, 64 games a step (docs/benchmark.md).

.venv/bin/python docs/examples/my_learner.py --steps 1M --seeds 0 1 2 --workers 2
.venv/bin/shelfie bench report artifacts/benchmark.json
"""

import functools
import time

import numpy as np
import torch

from shelfie_env import benchmark


def act(obs, mask, policy):  # play: the most likely legal action (module level: --workers processes import it)
    with torch.no_grad():
        return int(policy(torch.as_tensor(obs)).masked_fill(~torch.as_tensor(mask), -1e9).argmax())


def train(seed, steps):
    """REINFORCE for a budget of ``steps`` learner decisions; returns the policy, its decisions and seconds."""
    torch.manual_seed(seed)
    envs = benchmark.train_vec_env(64, seed)  # 64 games: the benchmark's opponents, seat draw and reward
    obs, _ = envs.reset(seed=seed)
    policy = torch.nn.Linear(obs.shape[1], int(envs.single_action_space.n))
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    games = [[] for _ in range(envs.num_envs)]  # each game's (observation, mask, action) so far
    batch, decisions, start = [], 0, time.time()
    while decisions < steps:  # the budget: learner decisions, one per game and step
        masks = envs.action_masks()
        with torch.no_grad():
            logits = policy(torch.as_tensor(obs)).masked_fill(~torch.as_tensor(masks), -1e9)
        actions = torch.distributions.Categorical(logits=logits).sample().numpy()
        for i, game in enumerate(games):
            game.append((obs[i], masks[i], actions[i]))
        obs, rewards, done, _, _ = envs.step(actions)  # a finished game restarts in the same step
        decisions += envs.num_envs
        for i in np.flatnonzero(done):  # its decisions, each with the game's final reward
            batch += [(*d, rewards[i]) for d in games[i]]
            games[i] = []
        if len(batch) >= 4096:  # one update: -final reward x log-probability of each decision
            o, m, a, r = (torch.as_tensor(np.array(x)) for x in zip(*batch))
            logp = torch.distributions.Categorical(logits=policy(o).masked_fill(~m, -1e9)).log_prob(a)
            loss = -(r.float() * logp).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            batch = []
    return policy, decisions, time.time() - start


def main():
    args = benchmark.parse_args(benchmark.parser("my_learner.py"))  # --steps --seeds --eval-games --workers ...
    torch.set_num_threads(1)
    for seed in args.seeds:
        policy, decisions, train_s = train(seed, args.steps)
        bot = benchmark.ObsBot(functools.partial(act, policy=policy))
        row = benchmark.task_row(  # the versus-2p row: its rating on the ladder, the score rate against greedy
            bot, args, "versus-2p", 2, learner="my_reinforce", seed=seed, train_s=train_s, decisions=decisions,
            workers=args.workers,
        )
        benchmark.add_rows(args.out, [row])  # merged into the results file as soon as the seed is done
        print(f"my_reinforce seed {seed}: {decisions:,} decisions in {train_s:.0f} s, row added to {args.out}")


if __name__ == "__main__":  # --workers starts processes that import this file: only the first one trains
    main()

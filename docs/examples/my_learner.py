"""Your own learner in the benchmark table: REINFORCE with a linear softmax policy (docs/benchmark.md).

.venv/bin/python docs/examples/my_learner.py --steps 1M --seeds 0 1 2
.venv/bin/python scripts/bench_report.py artifacts/benchmark.json
"""

import time

import torch

from shelfie_env.train import benchmark

args = benchmark.parse_args(benchmark.parser("my_learner.py"))  # --steps --seeds --eval-games --out ...
torch.set_num_threads(1)
rows = []
for seed in args.seeds:
    torch.manual_seed(seed)
    env = benchmark.train_env(seed)  # the benchmark's opponents, seat draw and reward
    obs, _ = env.reset(seed=seed)
    policy = torch.nn.Linear(len(obs), int(env.action_space.n))
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    log_probs, start = [], time.time()
    for _ in range(args.steps):  # the budget: learner decisions
        logits = policy(torch.as_tensor(obs)).masked_fill(~torch.as_tensor(env.action_masks()), -1e9)
        dist = torch.distributions.Categorical(logits=logits)
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        obs, reward, done, truncated, _ = env.step(int(action))
        if done or truncated:  # one update a game, on its final reward
            loss = -reward * torch.stack(log_probs).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            obs, log_probs = env.reset()[0], []
    train_s = time.time() - start

    def act(obs, mask, policy=policy):  # play: the most likely legal action
        return int(policy(torch.as_tensor(obs)).masked_fill(~torch.as_tensor(mask), -1e9).argmax())

    bot = benchmark.ObsBot(act)
    rows.append(benchmark.evaluate_row(bot, args, learner="my_reinforce", seed=seed, train_s=train_s))
benchmark.add_rows(args.out, rows)  # the same results file, merged: scripts/bench_report.py reads it
print(f"{len(rows)} row(s) added to {args.out}")

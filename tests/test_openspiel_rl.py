"""OpenSpiel's reinforcement learning tools on ``python_shelfie``, as docs/openspiel.md lists them."""

from __future__ import annotations

import random

import numpy as np
import pyspiel
import pytest
import torch
from open_spiel.python import rl_environment
from open_spiel.python.pytorch import dqn, nfsp, policy_gradient
from open_spiel.python.pytorch.ppo import PPO, PPOAgent
from open_spiel.python.vector_env import SyncVectorEnv

import shelfie_env.openspiel  # noqa: F401  (registers python_shelfie)


def _env(players: int, reward: str = "rank") -> rl_environment.Environment:
    game = pyspiel.load_game("python_shelfie", {"players": players, "reward": reward})
    return rl_environment.Environment(game, seed=players)


def _agents(kind: str, players: int, size: int, actions: int) -> list:
    if kind == "dqn":
        return [
            dqn.DQN(
                p,
                size,
                actions,
                hidden_layers_sizes=[16],
                min_buffer_size_to_learn=16,
                batch_size=8,
                learn_every=4,
            )
            for p in range(players)
        ]
    if kind == "nfsp":
        return [
            nfsp.NFSP(
                p, size, actions, [16], 500, 0.5, min_buffer_size_to_learn=16, batch_size=8, learn_every=4
            )
            for p in range(players)
        ]
    return [
        policy_gradient.PolicyGradient(
            p, size, actions, loss_str=kind, hidden_layers_sizes=[16], batch_size=2, num_critic_before_pi=1
        )
        for p in range(players)
    ]


@pytest.mark.parametrize(
    ("kind", "players"),
    [
        ("dqn", 1),
        ("dqn", 2),
        ("dqn", 4),
        ("a2c", 1),
        ("a2c", 3),
        ("rpg", 2),
        ("qpg", 2),
        ("rm", 2),
        ("nfsp", 2),
        ("nfsp", 3),
    ],
)
def test_rl_environment_agents_learn_by_self_play_at_their_table_sizes(kind: str, players: int) -> None:
    torch.manual_seed(0)
    np.random.seed(0)  # the agents' exploration and NFSP's choice of mode
    random.seed(0)  # the replay buffers' samples
    env = _env(players, "score" if players == 1 else "rank")
    size = env.observation_spec()["info_state"][0]
    actions = env.action_spec()["num_actions"]
    assert size == 63 * players + 60 and actions == 120
    agents = _agents(kind, players, size, actions)
    steps = 0
    # NFSP learns only in the games it plays its best response (half of them, drawn per game): give it more
    for _ in range(10 if kind == "nfsp" else 3):
        step = env.reset()
        while not step.last():
            seat = step.observations["current_player"]
            state = env.get_state
            assert step.observations["info_state"][seat] == pytest.approx(state.observation_tensor(seat))
            action = agents[seat].step(step).action
            assert action in state.legal_actions()
            step = env.step([action])
            steps += 1
        for agent in agents:
            agent.step(step)
        if players == 1:
            assert step.rewards[0] == env.get_state.returns()[0] > 0  # the final score
        else:
            assert sum(step.rewards) == pytest.approx(0.0)
    assert steps > 20 * players
    # NFSP learns in the mode (best response, average policy) each game drew, so look at every agent
    learners = agents if kind == "nfsp" else agents[:1]
    losses = tuple(x for a in learners for x in (a.loss if isinstance(a.loss, tuple) else (a.loss,)))
    learned = [torch.as_tensor(loss).detach().item() for loss in losses if loss is not None]
    assert learned and np.isfinite(learned).all()
    if kind != "nfsp":  # NFSP learns in the mode (best response, average policy) its games drew
        assert len(learned) == len(losses)


def _ppo(players: int, reward: str) -> PPO:
    envs = SyncVectorEnv([_env(players, reward) for _ in range(2)])
    shape = tuple(np.array(envs.envs[0].observation_spec()["info_state"]).flatten())
    game = envs.envs[0].game
    agent = PPO(
        input_shape=shape,
        num_actions=game.num_distinct_actions(),
        num_players=game.num_players(),
        player_id=0,
        num_envs=2,
        steps_per_batch=8,
        agent_fn=PPOAgent,
    )
    step = envs.reset()
    for _ in range(3):
        for _ in range(8):
            out = agent.step(step)
            step, reward, done, _ = envs.step(out, reset_if_done=True)
            agent.post_step(reward, done)
        agent.learn(step)
    return agent


def test_openspiel_ppo_runs_solo_with_the_score_reward() -> None:
    torch.manual_seed(0)
    agent = _ppo(1, "score")
    assert agent.total_steps_done == 3 * 8 * 2


@pytest.mark.parametrize("players", [2, 3])
def test_openspiel_ppo_stops_at_two_or_more_players_as_documented(players: int) -> None:
    with pytest.raises(RuntimeError, match="expanded size of the tensor"):
        _ppo(players, "rank")

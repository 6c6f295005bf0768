"""Settings a run may change against the protocol, and the one-game wrappers some of them need.

:data:`ABLATION` holds the protocol's value of every setting ``shelfie bench`` can change; a run that
changes one is tagged with it (:func:`variant`, the ``variant`` of its row). The settings that are env
options (``obs``, ``reroll="keep"``, ``score_reward``) and the opponent mix go to the batched envs
directly; the others here need a game at a time:

* :class:`FixedRerolls` / :class:`FixedRerollsBot` - the diagnostic ``--reroll stop|greedy``: a rule plays
  the learner's reroll decisions, in training and in play;
* :class:`ScoreGain` - ``--score-reward`` on a one-game env;
* :class:`IllegalActionPenalty` / :class:`RawChoiceBot` - A2C, which has no masks: an illegal action costs
  reward in training; in play the most likely legal action, counting how often the unmasked one was illegal.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from shelfie_env.benchmark.tasks import MARGIN_COEF, TRAIN_OPPONENTS, train_env
from shelfie_env.bots import act_on_game, make
from shelfie_env.bots.learned.bot import PPOBot
from shelfie_env.bots.learned.policy import NumpyPolicy
from shelfie_env.game.actions import STOP
from shelfie_env.game.engine import Game
from shelfie_env.observation.vector import encode

TRAIN_MIXES = {"mix": (0.5, 0.5), "random": (1.0, 0.0), "greedy": (0.0, 1.0)}
"""``--train-opponents``: (probability of ``random``, of ``greedy``) per training game."""
REROLLS = ("ids", "keep", "stop", "greedy")
"""``--reroll``: the learner rerolls by the SPEC's ids or by the faces kept (the env option ``reroll``), or
a rule plays its rerolls (``stop``, ``greedy``)."""
ABLATION: dict[str, Any] = {
    "net_arch": [256, 256],
    "ent_coef": 0.01,
    "batch_size": 512,
    "n_epochs": 4,
    "train_opponents": "mix",
    "margin_coef": MARGIN_COEF,
    "score_reward": 0.0,
    "reroll": "ids",
    "obs": "default",
}
"""The protocol's settings of the options a run may change; a run that changes one is tagged with it."""


def reroll_setting(value: str) -> str:
    """``--reroll`` as stored: ``learner`` (the name of ``ids`` in older rows and cards) reads as ``ids``."""
    return "ids" if value == "learner" else value


def variant(settings: dict[str, Any], base: dict[str, Any] | None = None) -> str:
    """The settings that differ from ``base`` (default :data:`ABLATION`) as ``key=value`` (``""``: none)."""
    base = ABLATION if base is None else base
    diff = [(k, v) for k, v in settings.items() if k in base and v != base[k]]
    return ",".join(f"{k}={'x'.join(map(str, v)) if isinstance(v, list) else v}" for k, v in diff)


def train_opponents(settings: dict[str, Any]) -> str:
    """The ``train_opponents`` field of a row: the protocol's mix or ``--train-opponents``'."""
    if settings["train_opponents"] == "mix":
        return TRAIN_OPPONENTS
    return "random {:g}, greedy {:g} per episode".format(*TRAIN_MIXES[settings["train_opponents"]])


class RerollRule:
    """``--reroll stop|greedy``: plays a reroll-phase decision (game -> action) by never rerolling or
    with ``greedy``'s choice."""

    def __init__(self, name: str) -> None:
        if name not in ("stop", "greedy"):
            raise ValueError(f"unknown reroll rule {name!r}")
        self.name = name
        self.greedy = make("greedy") if name == "greedy" else None

    def __call__(self, game: Game) -> int:
        return STOP if self.greedy is None else act_on_game(self.greedy, game)


def reroll_rule(rule: str) -> RerollRule | None:
    """``--reroll``: ``None`` (the learner rerolls) or the rule that plays its reroll-phase decisions."""
    return RerollRule(rule) if rule in ("stop", "greedy") else None


class ScoreGain(gym.Wrapper):
    """Adds ``coef`` times the learner's own score gain to every step's reward (a dense reward)."""

    def __init__(self, env: gym.Env, coef: float) -> None:
        super().__init__(env)
        self.coef, self.last = coef, 0

    def _own(self) -> int:
        return self.env.get_wrapper_attr("game").score(self.env.get_wrapper_attr("seat"))

    def reset(self, **kwargs: Any):
        out = self.env.reset(**kwargs)
        self.last = self._own()
        return out

    def step(self, action: int):
        obs, reward, terminated, truncated, info = self.env.step(action)
        own = self._own()
        reward, self.last = reward + self.coef * (own - self.last), own
        return obs, reward, terminated, truncated, info


class FixedRerolls(gym.Wrapper):
    """Diagnostic: the learner's reroll-phase decisions are played by ``rule`` (game -> action),
    so every decision the learner sees is a circle, an end of turn or a cross-out."""

    def __init__(self, env: gym.Env, rule: Any) -> None:
        super().__init__(env)
        self.rule = rule

    def _play_rerolls(self, obs: Any, reward: float, terminated: bool, truncated: bool, info: dict):
        game = self.env.get_wrapper_attr("game")
        while not (terminated or truncated) and game.phase_name == "reroll":
            obs, r, terminated, truncated, info = self.env.step(self.rule(game))
            reward += r
        return obs, reward, terminated, truncated, info

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        return self._play_rerolls(obs, 0.0, False, False, info)[::4]

    def step(self, action: int):
        return self._play_rerolls(*self.env.step(action))


class FixedRerollsBot(PPOBot):
    """A trained network that plays with ``--reroll``'s rule in the reroll phase."""

    def __init__(self, policy: NumpyPolicy, rule: Any) -> None:
        super().__init__(policy, 2, deterministic=True)
        self.rule = rule

    def act_game(self, game: Game) -> int:
        return int(self.rule(game)) if game.phase_name == "reroll" else super().act_game(game)


class IllegalActionPenalty(gym.Wrapper):
    """For learners without masks: an illegal action costs ``penalty`` and changes nothing;
    the ``limit``-th illegal action in a row ends the game as a loss (-1)."""

    def __init__(self, env: gym.Env, penalty: float = 0.1, limit: int = 10) -> None:
        super().__init__(env)
        self.penalty, self.limit = penalty, limit
        self.streak = 0
        self.illegal = 0
        self.total = 0

    def reset(self, **kwargs: Any):
        self.streak = 0
        return self.env.reset(**kwargs)

    def step(self, action: int):
        self.total += 1
        if not self.env.get_wrapper_attr("action_masks")()[int(action)]:
            self.illegal += 1
            self.streak += 1
            obs = encode(self.env.get_wrapper_attr("game"), self.env.get_wrapper_attr("seat"))
            if self.streak >= self.limit:
                return obs, -1.0, True, False, {"illegal_forfeit": True, "win": 0.0}
            return obs, -self.penalty, False, False, {}
        self.streak = 0
        return self.env.step(action)


class RawChoiceBot(PPOBot):
    """Plays the masked choice but counts how often the unmasked most likely action is illegal."""

    def __init__(self, policy: NumpyPolicy) -> None:
        super().__init__(policy, 2, deterministic=True)
        self.decisions = self.illegal = 0

    def act_game(self, game: Game) -> int:
        self.decisions += 1
        self.illegal += not game.legal_mask()[int(np.argmax(self.policy.logits(encode(game, game.current))))]
        return super().act_game(game)


def one_game_env(algo: str, seed: int, index: int, settings: dict[str, Any] = ABLATION) -> Any:
    """Env ``index`` of a ``DummyVecEnv`` of one-game envs (``a2c``, ``--reroll stop|greedy``): :func:`train_env`
    with the settings' opponents, margin and score reward, the reroll rule, A2C's illegal-action penalty."""
    from stable_baselines3.common.monitor import Monitor

    p_random, p_greedy = TRAIN_MIXES[settings["train_opponents"]]
    env: gym.Env = train_env(
        seed, index, opp_random=p_random, opp_greedy=p_greedy, margin_coef=settings["margin_coef"]
    )
    if settings["score_reward"]:
        env = ScoreGain(env, settings["score_reward"])
    rule = reroll_rule(settings["reroll"])
    if rule is not None:
        env = FixedRerolls(env, rule)
    if algo == "a2c":
        env = IllegalActionPenalty(env)
    return Monitor(env)

"""A trained actor as plain numpy: masked logits -> action, with no torch at play time.

A model is stored as an ``.npz`` of its torch ``state_dict`` (names as
Stable-Baselines3 writes them, weights as float32 arrays) beside a JSON card
(:mod:`shelfie_env.bots.learned.card`). :meth:`NumpyPolicy.from_state_dict` reads
the actor out of it; the critic's arrays are there for training to start from
(``shelfie train --init-from``). Two output heads exist: the flat
``Linear(hidden, 120)`` of SB3's MLP policy, and the expectimax head
(:mod:`shelfie_env.bots.learned.expect_head`), whose reroll logits are exact
expectations over the dice of learned placement values.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from shelfie_env.bots.learned.expect_head import (
    DICE_SIZE,
    NUM_REROLL_IDS,
    Layout,
    placement_values,
    reroll_values,
)

ACTIVATIONS = ("tanh", "relu")


def _linears(state: Mapping[str, np.ndarray], prefix: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The ``Linear`` layers ``prefix.{i}.weight/bias`` in order of ``i``, as ``(in, out)`` weights."""
    pat = re.compile(re.escape(prefix) + r"\.(\d+)\.weight$")
    idx = sorted(int(m.group(1)) for k in state if (m := pat.match(k)))
    return [(_t(state[f"{prefix}.{i}.weight"]), np.asarray(state[f"{prefix}.{i}.bias"])) for i in idx]


def _t(weight: np.ndarray) -> np.ndarray:
    """A torch ``(out, in)`` weight as a contiguous ``(in, out)`` array (the layout the sums are made in)."""
    return np.ascontiguousarray(np.asarray(weight).T)


class NumpyPolicy:
    """The actor of a MaskablePPO MLP policy (flat or expectimax head) in numpy.

    ``layers`` are the hidden layers (and, for the flat head, the output layer last);
    ``head`` holds the expectimax head's arrays (``players``, ``log_temp``,
    ``other_w/b``, ``sets_w{i}/sets_b{i}``) or is ``None`` for the flat head.
    """

    EXPECT_KEYS = ("players", "log_temp", "other_w", "other_b")

    def __init__(
        self,
        layers: list[tuple[np.ndarray, np.ndarray]],
        activation: str,
        head: Mapping[str, np.ndarray] | None = None,
    ) -> None:
        if activation not in ACTIVATIONS:
            raise ValueError(f"unsupported activation {activation!r} (tanh or relu)")
        self.layers = [(np.ascontiguousarray(w, np.float32), np.asarray(b, np.float32)) for w, b in layers]
        self.activation = activation
        self.head: dict[str, Any] | None = None
        self.expect: tuple[Layout, list[tuple[np.ndarray, np.ndarray]]] | None = None
        if head is not None:
            missing = [k for k in self.EXPECT_KEYS if k not in head]
            if missing or "sets_w0" not in head:
                raise ValueError(f"expectimax head weights lack {', '.join(missing or ['sets_w0'])}")
            self.head = {k: np.asarray(head[k], np.float32) for k in head}
            self.head["players"] = int(head["players"])
            n = sum(1 for k in head if str(k).startswith("sets_w"))
            sets = [(self.head[f"sets_w{i}"], self.head[f"sets_b{i}"]) for i in range(n)]
            self.expect = (Layout(int(head["players"])), sets)

    @classmethod
    def from_state_dict(cls, state: Mapping[str, np.ndarray], activation: str) -> NumpyPolicy:
        """The actor of an SB3 ``state_dict`` (arrays by torch name), flat or expectimax head."""
        layers = _linears(state, "mlp_extractor.policy_net")
        if not layers:
            raise ValueError("the weights have no mlp_extractor.policy_net layers")
        if "action_net.weight" in state:
            return cls([*layers, (_t(state["action_net.weight"]), state["action_net.bias"])], activation)
        if "action_net.log_temp" in state:
            sets = _linears(state, "action_net.sets")
            obs_size = sets[0][0].shape[0]
            head: dict[str, Any] = {
                "players": (obs_size - 60) // 63,
                "log_temp": state["action_net.log_temp"],
                "other_w": _t(state["action_net.other.weight"]),
                "other_b": state["action_net.other.bias"],
            }
            for i, (w, b) in enumerate(sets):
                head[f"sets_w{i}"], head[f"sets_b{i}"] = w, b
            return cls(layers, activation, head)
        raise ValueError(
            "unknown output head: neither action_net.weight nor action_net.log_temp in the weights"
        )

    @classmethod
    def from_sb3(cls, policy: Any) -> NumpyPolicy:
        """Copy the actor of a live SB3 ``MaskableActorCriticPolicy``."""
        import torch

        name = {torch.nn.Tanh: "tanh", torch.nn.ReLU: "relu"}.get(policy.activation_fn)
        if name is None:
            raise ValueError(f"unsupported activation {policy.activation_fn!r} (tanh or relu)")
        state = {k: v.detach().cpu().numpy() for k, v in policy.state_dict().items()}
        return cls.from_state_dict(state, name)

    def _act(self, x: np.ndarray) -> np.ndarray:
        return np.tanh(x) if self.activation == "tanh" else np.maximum(x, 0.0)

    def _mlp(
        self,
        x: np.ndarray,
        layers: list[tuple[np.ndarray, np.ndarray]],
        activate_last: bool,
        act: Any = None,
    ) -> np.ndarray:
        """``layers`` applied in turn, with the activation (default: the policy's) between them."""
        act = act or self._act
        for i, (w, b) in enumerate(layers):
            x = x @ w + b
            if activate_last or i < len(layers) - 1:
                x = act(x)
        return x

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Unmasked action logits for one observation (or a batch)."""
        x = self._mlp(np.asarray(obs, np.float32), self.layers, activate_last=self.head is not None)
        if self.head is None:
            return x
        single = x.ndim == 1
        out = self._expect_logits(np.atleast_2d(x), np.atleast_2d(np.asarray(obs, np.float32)))
        return out[0] if single else out

    def _expect_logits(self, h: np.ndarray, o: np.ndarray) -> np.ndarray:
        """Logits of the expectimax head for a batch of hidden states ``h`` and observations ``o``."""
        assert self.expect is not None and self.head is not None
        layout, sets = self.expect
        rows = np.flatnonzero(o[:, layout.reroll] > 0.5)  # only these can reroll
        reroll = np.zeros((len(h), NUM_REROLL_IDS), np.float32)
        if len(rows):
            sv = self._mlp(layout.position(o[rows]), sets, activate_last=False, act=np.tanh)
            v0 = placement_values(sv, layout.free_cells(o[rows]))
            dice = o[rows, layout.dice : layout.dice + DICE_SIZE]
            values = reroll_values(v0, dice, o[rows, layout.two_rolls] > 0.5)
            reroll[rows] = values / np.exp(self.head["log_temp"])
        return np.concatenate([reroll, h @ self.head["other_w"] + self.head["other_b"]], axis=1)

    def act(
        self,
        obs: np.ndarray,
        mask: np.ndarray,
        deterministic: bool = True,
        rng: np.random.Generator | None = None,
    ) -> int:
        """A legal action: argmax of the masked logits, or a sample from the masked softmax."""
        legal = np.asarray(mask, bool)
        if not legal.any():
            raise ValueError("no legal action in the mask")
        return int(self.act_many(np.asarray(obs)[None], legal[None], deterministic, rng)[0])

    def act_many(
        self,
        obs: np.ndarray,
        masks: np.ndarray,
        deterministic: bool = True,
        rng: np.random.Generator | None = None,
    ) -> np.ndarray:
        """:meth:`act` for a batch: ``(m, obs_size)`` observations and ``(m, 120)`` masks."""
        legal = np.asarray(masks, bool)
        if not legal.any(axis=1).all():
            raise ValueError("a row of the masks has no legal action")
        z = np.where(legal, self.logits(obs).astype(np.float64), -np.inf)
        if deterministic:
            return z.argmax(axis=1)
        p = np.exp(z - z.max(axis=1, keepdims=True))
        cdf = np.cumsum(p, axis=1)
        gen = rng if rng is not None else np.random.default_rng()
        u = gen.random(len(z))[:, None] * cdf[:, -1:]
        out = (cdf <= u).sum(axis=1)
        return np.minimum(out, z.shape[1] - 1)

    def state(self) -> dict[str, Any]:
        """The actor's arrays for ``np.savez`` (self-play snapshots)."""
        out: dict[str, Any] = {"activation": np.array(self.activation)}
        for i, (w, b) in enumerate(self.layers):
            out[f"w{i}"], out[f"b{i}"] = w, b
        if self.head is not None:
            for k, v in self.head.items():
                out[f"head_{k}"] = np.asarray(v)
        return out

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> NumpyPolicy:
        """Inverse of :meth:`state`."""
        n = sum(1 for k in state if str(k).startswith("w"))
        head = {k[5:]: state[k] for k in state if str(k).startswith("head_")} or None
        return cls([(state[f"w{i}"], state[f"b{i}"]) for i in range(n)], str(state["activation"]), head)


def read_weights(path: str | Path) -> dict[str, np.ndarray]:
    """The arrays of a model's ``.npz``; anything else raises ``CheckpointMismatchError``.

    Only plain arrays are read: a file holding pickled Python objects is refused like
    any other file that is not a model.
    """
    from shelfie_env.bots.learned.card import CheckpointMismatchError

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no model file at {p}")
    try:
        data = np.load(p, allow_pickle=False)
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise ValueError("a single array, not an archive of named arrays")
        with data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):
        raise CheckpointMismatchError(
            f"{path} is not a model file: a model is an .npz archive of weight arrays "
            "(as `shelfie train --export` and `shelfie train-td` write) beside its .json card"
        ) from None

"""Model checkpoints: an SB3 ``.zip`` plus a JSON *card* next to it.

The card says what the network was trained on (env id, observation layout
version and size, action layout, number of players), how (training config,
steps, wall time) and how well it plays (evaluation results with the command
that produced them). :func:`load_card` checks the card against the current
package and refuses a mismatch with :class:`CheckpointMismatchError`, so a
model is never silently fed observations it was not trained on.

torch / stable-baselines3 are imported only inside :func:`load_model` and
:func:`save_model`; reading and checking cards needs neither.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .actions import NUM_ACTIONS
from .expect_head import Layout, placement_values, reroll_values
from .keep_head import DICE_SIZE, NUM_REROLL_IDS, REROLL_FLAG, keep_features
from .observation import OBS_VERSION, observation_size

CARD_FORMAT = 1
ACTION_LAYOUT_VERSION = 1
ENV_VERSION = "v0"


class CheckpointMismatchError(ValueError):
    """A checkpoint's card does not fit the current environment (or is missing/malformed)."""


def env_id(num_players: int) -> str:
    """Gymnasium id of the single-agent env a ``num_players`` model plays."""
    if not 1 <= num_players <= 4:
        raise ValueError(f"num_players must be 1..4, got {num_players!r}")
    return f"shelfie/Solo-{ENV_VERSION}" if num_players == 1 else f"shelfie/Versus-{ENV_VERSION}"


def card_path(model_path: str | Path) -> Path:
    """The card that belongs to ``model_path`` (``x.zip`` -> ``x.json``)."""
    p = Path(model_path)
    return p.with_suffix(".json") if p.suffix == ".zip" else p.with_name(p.name + ".json")


def zip_path(model_path: str | Path) -> Path:
    """``model_path`` with the ``.zip`` suffix SB3 uses."""
    p = Path(model_path)
    return p if p.suffix == ".zip" else p.with_name(p.name + ".zip")


def make_card(
    num_players: int,
    *,
    algo: str = "MaskablePPO",
    config: Mapping[str, Any] | None = None,
    steps: int = 0,
    wall_time_s: float = 0.0,
    evaluation: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A card describing a model for the current env layout."""
    from . import __version__

    card: dict[str, Any] = {
        "card_format": CARD_FORMAT,
        "package_version": __version__,
        "env_id": env_id(num_players),
        "env_version": ENV_VERSION,
        "num_players": num_players,
        "obs_version": OBS_VERSION,
        "observation_size": observation_size(num_players),
        "action_layout_version": ACTION_LAYOUT_VERSION,
        "num_actions": NUM_ACTIONS,
        "algo": algo,
        "steps": int(steps),
        "wall_time_s": round(float(wall_time_s), 1),
        "saved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "config": dict(config or {}),
        "evaluation": dict(evaluation or {}),
    }
    if extra:
        card.update(extra)
    return card


def check_card(card: Mapping[str, Any], num_players: int | None = None, source: str = "card") -> None:
    """Raise :class:`CheckpointMismatchError` naming the field if ``card`` does not fit the current env."""
    if not isinstance(card, Mapping):
        raise CheckpointMismatchError(f"{source}: a card must be a JSON object, got {type(card).__name__}")
    for key in ("num_players", "env_id", "obs_version", "observation_size", "num_actions"):
        if key not in card:
            raise CheckpointMismatchError(f"{source}: missing field {key!r}")
    players = card["num_players"]
    if not isinstance(players, int) or not 1 <= players <= 4:
        raise CheckpointMismatchError(f"{source}: num_players must be 1..4, got {players!r}")
    expected = {
        "env_id": env_id(players),
        "obs_version": OBS_VERSION,
        "observation_size": observation_size(players),
        "num_actions": NUM_ACTIONS,
        "action_layout_version": ACTION_LAYOUT_VERSION,
    }
    for key, want in expected.items():
        got = card.get(key, want)
        if got != want:
            raise CheckpointMismatchError(
                f"{source}: {key} is {got!r} but this version of shelfie-env has {want!r}; "
                "the model was trained on a different observation/action layout - retrain it "
                "or install the matching shelfie-env version"
            )
    if num_players is not None and players != num_players:
        raise CheckpointMismatchError(
            f"{source}: the model was trained for {players} player(s), not {num_players}"
        )


def load_card(model_path: str | Path, num_players: int | None = None) -> dict[str, Any]:
    """Read and check the card of ``model_path``."""
    path = card_path(model_path)
    if not path.is_file():
        raise CheckpointMismatchError(f"no model card {path} next to the checkpoint {model_path}")
    try:
        card = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise CheckpointMismatchError(f"{path}: not valid JSON ({exc})") from None
    check_card(card, num_players, source=str(path))
    return card


def write_card(model_path: str | Path, card: Mapping[str, Any]) -> Path:
    """Write ``card`` as the JSON next to ``model_path``; returns its path."""
    path = card_path(model_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(card, indent=2, sort_keys=False) + "\n")
    tmp.replace(path)
    return path


def save_model(
    model: Any, model_path: str | Path, card: Mapping[str, Any], optimizer_state: bool = True
) -> Path:
    """Save an SB3 model and its card (card checked first); returns the ``.zip`` path.

    With ``optimizer_state=False`` the optimiser's moments are left out (an empty
    optimiser is stored in their place, so the file still loads): a model to play or
    to start a new run from (``--init-from``) is a third of the size; resuming a run
    needs them.
    """
    check_card(card, source="card to save")
    zp = zip_path(model_path)
    zp.parent.mkdir(parents=True, exist_ok=True)
    tmp = zp.with_name(zp.stem + ".tmp.zip")
    policy = model.policy
    kept = policy.optimizer
    if not optimizer_state:
        policy.optimizer = type(kept)(policy.parameters(), **kept.defaults)
    try:
        model.save(str(tmp))
    finally:
        policy.optimizer = kept
    tmp.replace(zp)
    write_card(zp, card)
    return zp


def load_model(
    model_path: str | Path,
    num_players: int | None = None,
    env: Any = None,
    custom_objects: Mapping[str, Any] | None = None,
) -> tuple[Any, dict]:
    """Load a MaskablePPO checkpoint after checking its card; returns ``(model, card)``.

    ``custom_objects`` replaces saved attributes (e.g. ``learning_rate`` when resuming).
    """
    zp = zip_path(model_path)
    if not zp.is_file():
        raise FileNotFoundError(f"no checkpoint at {zp}")
    card = load_card(zp, num_players)
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(str(zp), env=env, device="cpu", custom_objects=dict(custom_objects or {}))
    size = model.observation_space.shape
    if size != (card["observation_size"],):
        raise CheckpointMismatchError(
            f"{zp}: the network takes observations of shape {size}, the card says "
            f"({card['observation_size']},)"
        )
    return model, card


class NumpyPolicy:
    """The actor of an SB3 MLP policy as plain numpy: masked logits -> action.

    Used for frozen self-play opponents and the ``ppo`` bot: no torch call per
    move, and it pickles cheaply to worker processes. Three output heads exist:
    SB3's flat ``Linear(hidden, 120)`` (the last of ``layers``), or one of the heads
    of ``training/policy.py`` given as ``head`` (its weights): the keep head
    (:mod:`shelfie_env.keep_head`) or the expectimax head (:mod:`shelfie_env.expect_head`,
    recognised by its ``log_temp``), in which case every one of ``layers`` is a hidden layer.
    """

    HEAD_KEYS = (
        "dice_start",
        "other_w",
        "other_b",
        "embed_w",
        "embed_b",
        "keep_w",
        "score_w",
        "score_b",
        "out_w",
        "out_b",
    )
    EXPECT_KEYS = ("players", "log_temp", "other_w", "other_b")
    """Keys of the expectimax head (plus its MLP ``sets_w{i}``/``sets_b{i}``)."""

    def __init__(
        self,
        layers: list[tuple[np.ndarray, np.ndarray]],
        activation: str,
        head: Mapping[str, np.ndarray] | None = None,
    ) -> None:
        if activation not in ("tanh", "relu"):
            raise ValueError(f"unsupported activation {activation!r} (tanh or relu)")
        self.layers = [(np.ascontiguousarray(w, np.float32), np.asarray(b, np.float32)) for w, b in layers]
        self.activation = activation
        self.head: dict[str, Any] | None = None
        self.expect: tuple[Layout, list[tuple[np.ndarray, np.ndarray]]] | None = None
        if head is not None and "log_temp" in head:
            missing = [k for k in self.EXPECT_KEYS if k not in head]
            if missing or "sets_w0" not in head:
                raise ValueError(f"expectimax head weights lack {', '.join(missing or ['sets_w0'])}")
            self.head = {k: np.asarray(head[k], np.float32) for k in head}
            self.head["players"] = int(head["players"])
            n = sum(1 for k in head if str(k).startswith("sets_w"))
            sets = [(self.head[f"sets_w{i}"], self.head[f"sets_b{i}"]) for i in range(n)]
            self.expect = (Layout(int(head["players"])), sets)
        elif head is not None:
            missing = [k for k in self.HEAD_KEYS if k not in head]
            if missing:
                raise ValueError(f"keep head weights lack {', '.join(missing)}")
            self.head = {k: np.asarray(head[k], np.float32) for k in self.HEAD_KEYS if k != "dice_start"}
            self.head["dice_start"] = int(head["dice_start"])

    @classmethod
    def from_sb3(cls, policy: Any) -> NumpyPolicy:
        """Copy the actor weights of an SB3 ``MaskableActorCriticPolicy`` (MLP, flat Box obs)."""
        import torch

        act = policy.activation_fn
        name = {torch.nn.Tanh: "tanh", torch.nn.ReLU: "relu"}.get(act)
        if name is None:
            raise ValueError(f"unsupported activation {act!r} (tanh or relu)")
        numpy_head = getattr(policy.action_net, "numpy_head", None)
        modules = list(policy.mlp_extractor.policy_net)
        if numpy_head is None:
            modules.append(policy.action_net)
        layers = []
        for mod in modules:
            if isinstance(mod, torch.nn.Linear):
                layers.append(
                    (mod.weight.detach().cpu().numpy().T.copy(), mod.bias.detach().cpu().numpy().copy())
                )
        return cls(layers, name, numpy_head() if numpy_head is not None else None)

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
        head = self.head
        x = self._mlp(np.asarray(obs, np.float32), self.layers, activate_last=head is not None)
        if head is None:
            return x
        single = x.ndim == 1
        h = np.atleast_2d(x)
        o = np.atleast_2d(np.asarray(obs, np.float32))
        if self.expect is not None:
            out = self._expect_logits(h, o)
            return out[0] if single else out
        start = head["dice_start"]
        rows = np.flatnonzero(o[:, start + REROLL_FLAG] > 0.5)  # only these can reroll
        feats = keep_features(o[rows, start : start + DICE_SIZE])
        z = np.tanh((h[rows] @ head["embed_w"] + head["embed_b"])[:, None, :] + feats @ head["keep_w"])
        reroll = np.zeros((len(h), NUM_REROLL_IDS), np.float32)
        reroll[rows] = (
            (np.tanh(z @ head["score_w"] + head["score_b"]) @ head["out_w"])[..., 0] + head["out_b"]
        )
        out = np.concatenate([reroll, h @ head["other_w"] + head["other_b"]], axis=1)
        return out[0] if single else out

    def _expect_logits(self, h: np.ndarray, o: np.ndarray) -> np.ndarray:
        """Logits of the expectimax head (:mod:`shelfie_env.expect_head`) for a batch."""
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
        """Arrays for ``np.savez``."""
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

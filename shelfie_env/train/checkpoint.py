"""Training checkpoints: Stable-Baselines3 ``.zip`` files with their cards, and the ``.npz`` export.

A run writes ``.zip`` checkpoints (weights and optimiser state, to resume
exactly); :func:`export_weights` turns a model into the ``.npz`` + card pair the
``ppo`` bot plays without torch, and :func:`load_weights` starts a new model
from such a pair (``shelfie train --init-from``).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from shelfie_env.bots.learned.card import (
    CheckpointMismatchError,
    card_path,
    check_card,
    load_card,
    write_card,
)
from shelfie_env.bots.learned.policy import read_weights
from shelfie_env.bots.learned.sb3_zip import load_model, read_zip_weights, zip_path


def save_run_state(run_dir: str | Path, state: Mapping[str, Any]) -> Path:
    """Write a trainer's resume state as ``run_dir/latest.pt``, atomically (a crash leaves the old one)."""
    import torch

    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    tmp = run_dir / "latest.pt.tmp"
    torch.save(dict(state), tmp)
    return tmp.replace(run_dir / "latest.pt")


def load_run_state(path: str | Path, what: str = "resume state of a run") -> dict[str, Any]:
    """A trainer's resume state (``latest.pt``) read with torch's weights-only loader.

    Tensors, plain containers and numpy arrays of numbers load; a file holding any other
    object (or not a torch file at all) is refused with a ``ValueError`` naming ``path`` as
    not a ``what``, and nothing in it is built. A run folder is still trusted like code: its
    SB3 checkpoints and the benchmark's state are full pickles.
    """
    import pickle

    import torch

    numeric = [type(np.dtype(code)) for code in "?bBhHiIlLqQefdg"]  # no object, string or record dtypes
    allowed = [np.array(0).__reduce__()[0], np.ndarray, np.dtype, *numeric]
    try:
        with torch.serialization.safe_globals(allowed):
            state = torch.load(Path(path), map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError):
        raise ValueError(
            f"{path}: not a {what} (a file of tensors, numbers and arrays as `shelfie train` writes it)"
        ) from None
    if not isinstance(state, dict):
        raise ValueError(f"{path}: not a {what} (no dict of fields)")
    return state


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


def export_weights(model: Any, path: str | Path, card: Mapping[str, Any]) -> Path:
    """Write the policy's ``state_dict`` as ``path`` (``.npz``, float32) and ``card`` beside it."""
    check_card(card, source="card to export")
    out = Path(path).with_suffix(".npz")
    out.parent.mkdir(parents=True, exist_ok=True)
    arrays = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in model.policy.state_dict().items()}
    tmp = out.with_name(out.stem + ".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    tmp.replace(out)
    write_card(out, card)
    return out


def load_weights(model: Any, path: str | Path, num_players: int | None = None) -> dict[str, Any]:
    """Copy an exported ``.npz`` (or the weights of a ``.zip``) into ``model``'s policy; returns its card.

    Both are read as data (a ``.zip``'s ``policy.pth`` by torch's weights-only loader, its
    pickled ``data`` entry never): a model given by path cannot run code.

    The architecture must match exactly: a missing, extra or differently shaped
    array is refused with :class:`CheckpointMismatchError` naming it.
    """
    import torch

    p = Path(path)
    card = load_card(p, num_players)
    arrays = read_zip_weights(p) if p.suffix == ".zip" else read_weights(p)
    own = model.policy.state_dict()
    missing, extra = sorted(set(own) - set(arrays)), sorted(set(arrays) - set(own))
    if missing or extra:
        raise CheckpointMismatchError(
            f"{p}: the weights do not fit this network (missing {missing[:3]}, unexpected {extra[:3]}); "
            "policy_head, net_arch and activation must match the model's card"
        )
    for k, v in own.items():
        if tuple(arrays[k].shape) != tuple(v.shape):
            raise CheckpointMismatchError(
                f"{p}: {k} has shape {arrays[k].shape}, this network {tuple(v.shape)}"
            )
    model.policy.load_state_dict(
        {k: torch.as_tensor(np.asarray(arrays[k]), dtype=v.dtype) for k, v in own.items()}
    )
    return card


__all__ = [
    "card_path",
    "export_weights",
    "load_model",
    "load_run_state",
    "load_weights",
    "read_zip_weights",
    "save_model",
    "zip_path",
]


def copy_model(source: str | Path, export: str | Path) -> Path:
    """Copy model ``source`` (``.npz``) and its card to ``export`` (suffix ``.npz``); returns the new path."""
    source = Path(source)
    target = Path(export).with_suffix(".npz")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    shutil.copyfile(source.with_suffix(".json"), target.with_suffix(".json"))
    return target


def name_model(run_dir: str | Path, model: str | Path) -> Path:
    """A copy of the run's chosen ``model`` (``best.npz``, ``latest.zip``, ...) named after the run,
    ``<run_dir>/<run_dir name><suffix>``, its card's ``name`` the run's: two runs' models then read
    as ``ppo:ppo_2p`` and ``ppo:mine`` in results, not ``ppo:best`` and ``ppo:best(2)``."""
    run_dir, model = Path(run_dir), Path(model)
    target = run_dir / f"{run_dir.resolve().name}{model.suffix}"
    if target == model:
        return model
    shutil.copyfile(model, target)
    card = load_card(model)
    write_card(target, {**card, "name": run_dir.resolve().name})
    return target

"""DeepWeave's checkpoint: the network's weights in one small ``.npz`` file (kilobytes).

Format ``coflowopt-deepweave/2`` (a numpy ``.npz``, read with ``allow_pickle=False``); version 1
files (the first shipped checkpoint) still load: they differ only in a config without
``feature_set`` / ``head`` (read as ``"v1"`` / ``"policy"``) and no ``run`` in the meta:

* ``meta``: UTF-8 JSON bytes (a ``uint8`` array): ``format`` (this format's name and
  version), ``trained`` (bool: ``false`` for an untrained placeholder), ``seed`` (the training
  seed, or ``null``), ``workload`` (what it was trained on), ``iterations`` (training
  iterations), ``date`` (ISO 8601), optionally ``run`` (the scheduler parameters the policy
  was trained for, e.g. ``{"rerank": "events", "across": "global", "engine": "fast"}``: the
  defaults of
  :class:`~coflowopt.schedulers.learned.deepweave.DeepWeaveParams` with this checkpoint), and
  any further keys the trainer adds;
* ``config``: UTF-8 JSON bytes of :meth:`DeepWeaveConfig.to_dict`;
* ``param/<name>``: one float64 array per parameter of
  :func:`~coflowopt.schedulers.learned.network.param_shapes`, the feature normalisation
  (``param/norm.shift``, ``param/norm.scale``) included.

:func:`load_checkpoint` checks all of it and raises :class:`CheckpointError` naming the file
and the field on a corrupt, truncated, incomplete or mismatched file.  No torch needed.
"""

from __future__ import annotations

import datetime
import io
import json
import os
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from coflowopt.schedulers.learned.network import DeepWeaveConfig, init_params, param_shapes

__all__ = ["FORMAT", "CheckpointError", "default_checkpoint_path", "load_checkpoint",
           "save_checkpoint", "write_placeholder"]

FORMAT = "coflowopt-deepweave/2"
#: Formats :func:`load_checkpoint` reads (the first shipped checkpoint is version 1).
READABLE_FORMATS = ("coflowopt-deepweave/1", FORMAT)
META_FIELDS = ("format", "trained", "seed", "workload", "iterations", "date")
_PREFIX = "param/"


class CheckpointError(ValueError):
    """A checkpoint file that cannot be used; ``path`` and ``field`` name the place."""

    def __init__(self, path: Any, field: str, problem: str):
        super().__init__(f"DeepWeave checkpoint {path}: {field}: {problem}")
        self.path, self.field, self.problem = str(path), field, problem


def default_checkpoint_path() -> Path:
    """The checkpoint shipped with the package (``learned/data/deepweave.npz``)."""
    return Path(__file__).resolve().parent / "data" / "deepweave.npz"


def _json_bytes(obj: Any) -> np.ndarray:
    return np.frombuffer(json.dumps(obj, sort_keys=True).encode("utf-8"), dtype=np.uint8)


def save_checkpoint(path: str | os.PathLike[str], params: Mapping[str, np.ndarray],
                    config: DeepWeaveConfig, meta: Mapping[str, Any]) -> None:
    """Write ``params`` (every name of ``param_shapes(config)``, shapes checked), ``config``
    and ``meta`` to ``path`` (atomically: a temporary file, then a rename).

    ``meta`` must say ``trained`` (bool); ``seed`` (default ``None``), ``workload`` (``""``),
    ``iterations`` (0) and ``date`` (now, UTC) are filled in when absent; other JSON-able keys
    are kept.  ``format`` is set here.
    """
    if "trained" not in meta or not isinstance(meta["trained"], bool):
        raise ValueError("save_checkpoint: meta['trained'] must be given as a bool")
    utc = datetime.timezone.utc  # noqa: UP017 (python_requires >= 3.10)
    m: dict[str, Any] = {"seed": None, "workload": "", "iterations": 0,
                         "date": datetime.datetime.now(utc).isoformat(timespec="seconds")}
    m.update(dict(meta))
    m["format"] = FORMAT
    shapes = param_shapes(config)
    arrays: dict[str, np.ndarray] = {"meta": _json_bytes(m), "config": _json_bytes(
        config.to_dict())}
    for name, shape in shapes.items():
        if name not in params:
            raise ValueError(f"save_checkpoint: parameter {name!r} missing")
        a = np.asarray(params[name], dtype=np.float64)
        if a.shape != shape:
            raise ValueError(f"save_checkpoint: parameter {name!r} has shape {a.shape}, the "
                             f"config needs {shape}")
        arrays[_PREFIX + name] = a
    extra = sorted(set(params) - set(shapes))
    if extra:
        raise ValueError(f"save_checkpoint: parameter {extra[0]!r} is not in the config's "
                         "network")
    path = Path(path)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".",
                               prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(buf.getvalue())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _json_entry(data: Any, path: Path, key: str) -> Any:
    if key not in data.files:
        raise CheckpointError(path, key, "missing entry")
    try:
        raw = data[key]
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as exc:
        raise CheckpointError(path, key, f"unreadable ({exc})") from None
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise CheckpointError(path, key, f"expected JSON bytes, got a {raw.dtype} array")
    try:
        return json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(path, key, f"not valid JSON ({exc})") from None


def load_checkpoint(path: str | os.PathLike[str] | None = None
                    ) -> tuple[dict[str, np.ndarray], DeepWeaveConfig, dict[str, Any]]:
    """``(params, config, meta)`` from ``path`` (default: :func:`default_checkpoint_path`).

    Raises :class:`FileNotFoundError` for a missing file and :class:`CheckpointError`
    (naming the file and the field) for one that is not a zip, is truncated, lacks an entry
    or a meta field, has an unknown format version, a bad config, a parameter of the wrong
    shape or dtype, a non-finite value, a zero ``norm.scale`` or an unexpected parameter.
    """
    p = default_checkpoint_path() if path is None else Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"DeepWeave checkpoint {p}: file not found")
    try:
        data = np.load(p, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise CheckpointError(p, "file", f"not a readable .npz ({exc})") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise CheckpointError(p, "file", "a single .npy array, not an .npz archive")
    with data:
        meta = _json_entry(data, p, "meta")
        if not isinstance(meta, dict):
            raise CheckpointError(p, "meta", "expected a JSON object")
        for f in META_FIELDS:
            if f not in meta:
                raise CheckpointError(p, f"meta.{f}", "missing field")
        if meta["format"] not in READABLE_FORMATS:
            raise CheckpointError(p, "meta.format", f"expected one of "
                                  f"{', '.join(READABLE_FORMATS)}, got {meta['format']!r}")
        run = meta.get("run", {})
        if not isinstance(run, dict) or set(run) - {"rerank", "across", "engine"}:
            raise CheckpointError(p, "meta.run", f"expected an object with rerank / across / "
                                  f"engine, got {run!r}")
        if not isinstance(meta["trained"], bool):
            raise CheckpointError(p, "meta.trained", f"expected a bool, got {meta['trained']!r}")
        cfg_d = _json_entry(data, p, "config")
        if not isinstance(cfg_d, dict):
            raise CheckpointError(p, "config", "expected a JSON object")
        try:
            config = DeepWeaveConfig.from_dict(cfg_d)
        except (TypeError, ValueError) as exc:
            raise CheckpointError(p, "config", str(exc)) from None
        shapes = param_shapes(config)
        params: dict[str, np.ndarray] = {}
        for name, shape in shapes.items():
            key = _PREFIX + name
            if key not in data.files:
                raise CheckpointError(p, key, "missing entry")
            try:
                a = data[key]
            except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as exc:
                raise CheckpointError(p, key, f"unreadable ({exc})") from None
            if a.dtype.kind != "f":
                raise CheckpointError(p, key, f"expected floats, got dtype {a.dtype}")
            if a.shape != shape:
                raise CheckpointError(p, key, f"shape {a.shape}, the config needs {shape}")
            if not np.all(np.isfinite(a)):
                raise CheckpointError(p, key, "non-finite value")
            params[name] = a.astype(np.float64)
        if np.any(params["norm.scale"] == 0):
            raise CheckpointError(p, _PREFIX + "norm.scale", "zero scale")
        extra = sorted(k for k in data.files
                       if k not in ("meta", "config") and k[len(_PREFIX):] not in shapes)
        if extra:
            raise CheckpointError(p, extra[0], "unexpected entry (not in the config's network)")
    return params, config, meta


def write_placeholder(path: str | os.PathLike[str] | None = None, seed: int = 0,
                      config: DeepWeaveConfig | None = None) -> Path:
    """Write an *untrained*, seeded checkpoint (``init_params(config, seed)``, meta
    ``trained=false``) to ``path`` (default: the shipped file) and return the path."""
    p = default_checkpoint_path() if path is None else Path(path)
    cfg = DeepWeaveConfig() if config is None else config
    save_checkpoint(p, init_params(cfg, seed), cfg, {
        "trained": False, "seed": seed, "workload": "none", "iterations": 0,
        "note": "UNTRAINED placeholder: seeded initial weights (init_params), not a trained "
                "policy; replace with a trained checkpoint (coflowopt train deepweave)"})
    return p

"""DeepWeave's checkpoint: round trip, the shipped placeholder, every corruption case naming
the file and the field."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

from coflowopt.schedulers.learned.checkpoint import (
    FORMAT,
    CheckpointError,
    default_checkpoint_path,
    load_checkpoint,
    save_checkpoint,
    write_placeholder,
)
from coflowopt.schedulers.learned.network import DeepWeaveConfig, init_params, param_shapes

META = {"trained": True, "seed": 7, "workload": "tpcds_like", "iterations": 12,
        "date": "2024-01-01T00:00:00+00:00"}


@pytest.fixture
def ckpt(tmp_path):
    cfg = DeepWeaveConfig(hidden_policy=(32, 16), v_max=20)
    p = init_params(cfg, 3)
    p["norm.scale"] = np.full(cfg.n_features, 2.0)
    path = tmp_path / "dw.npz"
    save_checkpoint(path, p, cfg, META)
    return path, p, cfg


def _entries(path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


def _rewrite(path, entries: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w") as z:
        for n, data in entries.items():
            z.writestr(n, data)


def _npy(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def _json(obj) -> bytes:
    return _npy(np.frombuffer(json.dumps(obj).encode(), dtype=np.uint8))


def test_round_trip(ckpt):
    path, p, cfg = ckpt
    q, cfg2, meta = load_checkpoint(path)
    assert cfg2 == cfg
    assert q.keys() == p.keys() and all(np.array_equal(q[k], p[k]) for k in p)
    assert meta["format"] == FORMAT
    assert {k: meta[k] for k in META} == META


def test_shipped_checkpoint_is_small_and_marked(tmp_path):
    params, cfg, meta = load_checkpoint()
    assert isinstance(meta["trained"], bool)
    assert default_checkpoint_path().stat().st_size < 200_000
    if meta["trained"] is False:  # the placeholder: seeded initial weights
        again = write_placeholder(tmp_path / "p.npz", seed=meta["seed"], config=cfg)
        q, _, m2 = load_checkpoint(again)
        assert m2["trained"] is False and "UNTRAINED" in m2["note"]
        assert all(np.array_equal(q[k], params[k]) for k in params)


def test_missing_file():
    with pytest.raises(FileNotFoundError, match=r"nope\.npz"):
        load_checkpoint("/nonexistent/nope.npz")


def test_not_a_zip(tmp_path):
    path = tmp_path / "junk.npz"
    path.write_bytes(b"\x00garbage" * 50)
    with pytest.raises(CheckpointError, match=r"junk\.npz: file"):
        load_checkpoint(path)


def test_truncated(ckpt):
    path, _, _ = ckpt
    data = path.read_bytes()
    for cut in (len(data) // 2, len(data) - 30, 200):
        path.write_bytes(data[:cut])
        with pytest.raises(CheckpointError, match=r"dw\.npz: ") as exc:
            load_checkpoint(path)
        assert exc.value.field


def test_corrupt_member(ckpt):
    path, _, _ = ckpt
    e = _entries(path)
    e["param/f.w0.npy"] = b"\x93NUMPY garbage"
    _rewrite(path, e)
    with pytest.raises(CheckpointError, match=r"dw\.npz: param/f\.w0: unreadable"):
        load_checkpoint(path)


@pytest.mark.parametrize("field", ["format", "trained", "seed", "workload", "iterations",
                                   "date"])
def test_missing_meta_field(ckpt, field):
    path, _, _ = ckpt
    e = _entries(path)
    meta = json.loads(np.load(io.BytesIO(e["meta.npy"])).tobytes())
    del meta[field]
    e["meta.npy"] = _json(meta)
    _rewrite(path, e)
    with pytest.raises(CheckpointError, match=rf"dw\.npz: meta\.{field}: missing field"):
        load_checkpoint(path)


@pytest.mark.parametrize("entry", ["meta", "config", "param/policy.b1", "param/norm.scale"])
def test_missing_entry(ckpt, entry):
    path, _, _ = ckpt
    e = _entries(path)
    del e[entry + ".npy"]
    _rewrite(path, e)
    with pytest.raises(CheckpointError, match=rf"dw\.npz: {entry}: missing entry"):
        load_checkpoint(path)


def test_shape_mismatch(ckpt):
    path, _, cfg = ckpt
    e = _entries(path)
    e["param/g.w1.npy"] = _npy(np.zeros((3, 4)))
    _rewrite(path, e)
    want = param_shapes(cfg)["g.w1"]
    with pytest.raises(CheckpointError,
                       match=rf"dw\.npz: param/g\.w1: shape \(3, 4\), the config needs "
                             rf"\({want[0]}, {want[1]}\)"):
        load_checkpoint(path)


@pytest.mark.parametrize("case", ["format", "trained", "config_key", "config_value",
                                  "config_json", "dtype", "nan", "scale0", "extra"])
def test_bad_values(ckpt, case):
    path, _, _ = ckpt
    e = _entries(path)
    meta = json.loads(np.load(io.BytesIO(e["meta.npy"])).tobytes())
    cfg = json.loads(np.load(io.BytesIO(e["config.npy"])).tobytes())
    field = {"format": "meta.format", "trained": "meta.trained", "config_key": "config",
             "config_value": "config", "config_json": "config", "dtype": "param/f.b0",
             "nan": "param/attr.w0", "scale0": "param/norm.scale",
             "extra": "param/zzz"}[case]
    if case == "format":
        meta["format"] = "coflowopt-deepweave/99"
    elif case == "trained":
        meta["trained"] = "yes"
    elif case == "config_key":
        cfg["colour"] = 1
    elif case == "config_value":
        cfg["v_max"] = -3
    elif case == "config_json":
        e["config.npy"] = _npy(np.frombuffer(b"{not json", dtype=np.uint8))
    elif case == "dtype":
        e["param/f.b0.npy"] = _npy(np.zeros(8, dtype=np.int64))
    elif case == "nan":
        a = np.load(io.BytesIO(e["param/attr.w0.npy"]))
        a[0, 0] = np.nan
        e["param/attr.w0.npy"] = _npy(a)
    elif case == "scale0":
        e["param/norm.scale.npy"] = _npy(np.zeros(10))
    elif case == "extra":
        e["param/zzz.npy"] = _npy(np.zeros(2))
    e["meta.npy"] = _json(meta)
    if case != "config_json":
        e["config.npy"] = _json(cfg)
    _rewrite(path, e)
    with pytest.raises(CheckpointError, match=rf"dw\.npz: {field}: ") as exc:
        load_checkpoint(path)
    assert exc.value.field == field


def test_save_checks_its_input(tmp_path):
    cfg = DeepWeaveConfig(v_max=8)
    p = init_params(cfg, 0)
    with pytest.raises(ValueError, match="trained"):
        save_checkpoint(tmp_path / "a.npz", p, cfg, {"seed": 1})
    bad = dict(p)
    bad["f.w0"] = np.zeros((1, 1))
    with pytest.raises(ValueError, match=r"f\.w0"):
        save_checkpoint(tmp_path / "a.npz", bad, cfg, {"trained": False})
    assert not (tmp_path / "a.npz").exists()

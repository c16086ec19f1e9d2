"""Issue 30's training pieces: training seeds disjoint from the held-out ones, the teachers on
the stepper against the schedulers themselves, the top-k Plackett-Luce term, imitation and
fine-tuning smoke runs, and ``coflowopt train deepweave --imitate``."""

from __future__ import annotations

import math

import numpy as np
import pytest

import coflowopt
from coflowopt.schedulers.learned.network import DeepWeaveConfig
from coflowopt.training.episodes import rollout
from coflowopt.training.teachers import HELD_OUT, demonstration, training_seeds
from coflowopt.workloads.dags import tpcds_like

torch = pytest.importorskip("torch")


def test_training_seeds_never_held_out_and_seeded() -> None:
    s = training_seeds(0, 300)
    assert not {g for _, g in s} & set(HELD_OUT)
    assert s == training_seeds(0, 300) and s != training_seeds(1, 300)
    assert [w for w, _ in s[:3]] == ["tpcds-10", "ggen-30-20ports", "tpcds-30-arriving"]


def test_sincronia_teacher_on_the_stepper_is_sincronia() -> None:
    """A second implementation: the teacher (BSSI rank of the ready coflows at every decision
    epoch) gives Sincronia's own average JCT (the run service, validated)."""
    inst = tpcds_like(3, ports=6, seed=11)
    cfg = DeepWeaveConfig.heuristic()
    d = demonstration(inst, cfg, record=4)
    v = coflowopt.run(inst, "sincronia").valid
    want = float((v.job_completion - inst.job_release).mean())
    assert d["avg_jct"]["sincronia"] == pytest.approx(want, rel=1e-9)
    assert d["teacher"] == min(d["avg_jct"], key=d["avg_jct"].get)
    assert len(d["orders"]) <= 4 and d["x"][0].shape[1:] == (inst.n_coflows, 14)


def test_record_keeps_a_sample_of_the_steps() -> None:
    inst = tpcds_like(2, ports=6, seed=3)
    cfg = DeepWeaveConfig.heuristic()
    full = rollout(inst, None, cfg, steps=None, teacher="gdm-bf", seed=0)
    part = rollout(inst, None, cfg, steps=None, teacher="gdm-bf", seed=0, record=3)
    assert len(part["steps"]) == 3 and np.all(np.diff(part["steps"]) > 0)
    for k, t in enumerate(part["steps"]):
        np.testing.assert_array_equal(part["orders"][k], full["orders"][t])
        np.testing.assert_array_equal(part["x"][0][k], full["x"][0][t])


def test_top_k_plackett_luce_by_hand() -> None:
    """Priorities log 1, log 2, log 3, order (2, 1, 0): the first draw has probability 3/6,
    the first two 3/6 * 2/3."""
    from coflowopt.training.reinforce import batched_log_prob

    p = torch.log(torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float64))
    o = [np.array([2, 1, 0])]
    assert float(batched_log_prob(p, o, top=1)[0]) == pytest.approx(math.log(0.5))
    assert float(batched_log_prob(p, o, top=2)[0]) == pytest.approx(math.log(1 / 3))
    assert float(batched_log_prob(p, o)[0]) == pytest.approx(math.log(1 / 3))


def test_imitation_lowers_the_likelihood_loss_and_finetune_runs() -> None:
    from coflowopt.training.imitation import ImitationConfig, imitate
    from coflowopt.training.ppo import FineTuneConfig, finetune

    cfg = ImitationConfig(instances=1, epochs=3, record=6, lr=1e-2, validation=1,
                          workloads=("tpcds-10",))
    res = imitate(cfg)
    assert res.curve[-1]["nll_per_draw"] < res.curve[0]["nll_per_draw"]
    (v,) = res.validation  # the greedy policy against the better teacher, on the stepper
    assert v["ratio"] == pytest.approx(v["policy"] / min(v["sincronia"], v["gdm-bf"]))
    assert res.curve[-1]["val_tpcds-10"] == pytest.approx(v["ratio"])
    ft = finetune(FineTuneConfig(iterations=1, agents=2, record=4, validation=0,
                                 workloads=("tpcds-10",)), res.params, res.config)
    row = ft.curve[0]
    assert np.isfinite(row["entropy"]) and row["kl"] >= -1e-12
    assert all(np.all(np.isfinite(a)) for a in ft.params.values())


def test_cli_imitate(tmp_path, capsys) -> None:
    from coflowopt.cli import main
    from coflowopt.schedulers.learned.checkpoint import load_checkpoint

    rc = main(["train", "deepweave", "--imitate", "--out", str(tmp_path), "--instances", "1",
               "--epochs", "1", "--validation", "0", "--no-progress"])
    assert rc == 0
    _, cfg, meta = load_checkpoint(tmp_path / "deepweave.npz")
    assert cfg.head == "attr" and meta["run"] == {"rerank": "events", "across": "global",
                                              "engine": "fast"}

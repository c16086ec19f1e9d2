"""One truth for Sincronia's mode (issue 26, item 5): the registry's kind is what ``run -s
sincronia`` runs by default (``mode="online"``), and the factor 4 applies only to
``mode="offline"``, the paper's one BSSI order, as the listing says."""

from __future__ import annotations

import numpy as np

import coflowopt as co
from coflowopt.model import CoflowSpec, build_instance
from coflowopt.schedulers.registry import KINDS, get, registry


def test_every_entry_with_a_mode_lists_its_default_mode_as_its_kind() -> None:
    seen = 0
    for name, info in registry().items():
        cls = info.params_class
        if "mode" not in cls.field_names():
            continue
        default = cls().mode
        if default in KINDS:
            seen += 1
            assert info.kind == default, (name, info.kind, default)
    assert seen >= 1  # sincronia at least


def test_sincronia_listing_matches_its_default_run(capsys) -> None:
    from coflowopt.cli import main

    info = get("sincronia")
    assert info.params_class().mode == "online" == info.kind
    batch = build_instance(3, coflows=[CoflowSpec([(0, 1, 2.0), (1, 2, 1.0)]),
                                       CoflowSpec([(1, 1, 3.0)]), CoflowSpec([(2, 0, 1.0)])])
    assert info.factor_for("weighted_completion", batch) is None  # the default run: online
    assert info.factor_for("weighted_completion", batch, {"mode": "offline"}) == "4"
    # the default run is the online mode (same CCTs as asking for it)
    dflt = co.run(batch, "sincronia")
    online = co.run(batch, "sincronia", params={"mode": "online"})
    np.testing.assert_array_equal(dflt.valid.coflow_completion, online.valid.coflow_completion)
    assert main(["schedulers"]) == 0
    row = next(r for r in capsys.readouterr().out.splitlines() if r.startswith("sincronia "))
    assert row.split()[3] == "online"  # name semantics family kind ...
    assert "(release 0, mode=offline)" in row  # what the factor 4 needs


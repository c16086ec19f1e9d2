"""The JSON interchange format: round trips and errors that name the file and field."""

import gzip
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import example2, instances

from coflowopt import (
    Instance,
    InterchangeError,
    Schedule,
    load_instance,
    load_schedule,
    save_instance,
    save_schedule,
    validate,
)
from coflowopt.interchange import instance_to_dict, schedule_to_dict
from coflowopt.schedulers import sequential


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(instances(), st.sampled_from(["i.json", "i.json.gz"]))
def test_instance_round_trip(tmp_path, inst: Instance, name: str) -> None:
    p = tmp_path / name
    save_instance(inst, p)
    assert load_instance(p) == inst


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(instances(), st.sampled_from(["s.json", "s.json.gz"]))
def test_schedule_round_trip(tmp_path, inst: Instance, name: str) -> None:
    s = sequential(inst)
    p = tmp_path / name
    save_schedule(s, p)
    back = load_schedule(p)
    assert back == s
    validate(inst, back)


def test_field_names_exactly(tmp_path) -> None:
    inst = example2()
    d = instance_to_dict(inst)
    assert set(d) == {"format", "time_unit", "ports", "capacity_in", "capacity_out", "flows",
                      "coflows", "jobs", "starts_after"}
    assert set(d["flows"]) == {"src", "dst", "volume", "coflow"}
    assert set(d["coflows"]) == {"id", "release", "weight", "job"}
    assert set(d["jobs"]) == {"id", "release", "weight", "deadline"}
    assert d["jobs"]["deadline"] == [None, None]
    assert d["starts_after"] == [[0, 2], [1, 2], [3, 4]]
    s = schedule_to_dict(sequential(inst))
    assert set(s) == {"format", "breakpoints", "intervals"}
    assert set(s["intervals"][0]) == {"flows", "rates"}
    assert len(s["intervals"]) == len(s["breakpoints"]) - 1
    # gzip by extension
    save_instance(inst, tmp_path / "x.json.gz")
    with gzip.open(tmp_path / "x.json.gz", "rt") as fh:
        assert json.load(fh)["format"] == "coflowopt-instance/1"


def test_hand_written_schedule_file(tmp_path) -> None:
    # a schedule written by another tool
    doc = {"format": "coflowopt-schedule/1", "breakpoints": [0, 2],
           "intervals": [{"flows": [0, 1], "rates": [1.0, 0.5]}]}
    (tmp_path / "s.json").write_text(json.dumps(doc))
    s = load_schedule(tmp_path / "s.json")
    assert s.interval(0)[0].tolist() == [0, 1]
    assert s == Schedule.from_intervals([0, 2], [{0: 1.0, 1: 0.5}])


@pytest.mark.parametrize("mutate,pattern", [
    (lambda d: d.pop("flows"), r"missing field 'flows'"),
    (lambda d: d["flows"].pop("volume"), r"flows: missing field 'volume'"),
    (lambda d: d.update(format="other/1"), r"field 'format' is 'other/1'"),
    (lambda d: d["flows"]["volume"].__setitem__(0, -1.0), r"flows\.volume: value -1\.0"),
    (lambda d: d["flows"]["src"].__setitem__(1, 99), r"flows\.src: port 99 out of range"),
    (lambda d: d["coflows"]["id"].__setitem__(1, "c1"), r"coflows\.id: duplicate id 'c1'"),
    (lambda d: d["starts_after"].append([2, 0]), r"cycle through coflows"),
])
def test_bad_instance_files(tmp_path, mutate, pattern: str) -> None:
    d = instance_to_dict(example2())
    mutate(d)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(d))
    with pytest.raises(InterchangeError, match=pattern) as exc:
        load_instance(p)
    assert str(p) in str(exc.value)


def test_bad_json_names_line(tmp_path) -> None:
    p = tmp_path / "broken.json"
    p.write_text('{"format": "coflowopt-schedule/1",\n "breakpoints": [0, 1,]}')
    with pytest.raises(InterchangeError, match=r"broken\.json: line 2"):
        load_schedule(p)
    p.write_text(json.dumps({"format": "coflowopt-schedule/1", "breakpoints": [0, 1],
                             "intervals": [{"flows": [0]}]}))
    with pytest.raises(InterchangeError, match=r"intervals\[0\]: missing field 'rates'"):
        load_schedule(p)


def test_nan_is_refused(tmp_path) -> None:
    d = instance_to_dict(example2())
    d["coflows"]["weight"][0] = float("nan")
    p = tmp_path / "nan.json"
    p.write_text(json.dumps(d))
    with pytest.raises(InterchangeError, match=r"coflows\.weight: NaN for coflow 'c1'"):
        load_instance(p)

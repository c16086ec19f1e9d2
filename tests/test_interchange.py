"""The JSON interchange format: round trips and errors that name the file and field."""

import gzip
import json

import numpy as np
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
from coflowopt.interchange import instance_to_dict, schedule_json_chunks, schedule_to_dict
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
    # a number written as text is refused where it is, not coerced (issue 26)
    (lambda d: d["flows"]["volume"].__setitem__(1, "12"),
     r"flows\.volume\[1\]: expected a number, got '12'"),
    (lambda d: d["coflows"]["release"].__setitem__(0, "0"),
     r"coflows\.release\[0\]: expected a number, got '0'"),
    (lambda d: d["jobs"]["weight"].__setitem__(0, "2"),
     r"jobs\.weight\[0\]: expected a number, got '2'"),
    (lambda d: d["flows"]["src"].__setitem__(0, "1"),
     r"flows\.src\[0\]: expected an integer, got '1'"),
    (lambda d: d.update(capacity_in=["1"] * len(d["capacity_in"])),
     r"capacity_in\[0\]: expected a number, got '1'"),
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


# -- the sparse segment form, streamed writing -------------------------------------------------

def _many_intervals(K: int = 2000, F: int = 8) -> Schedule:
    """K intervals, F flows each at one constant rate throughout: few segments."""
    bps = np.linspace(0.0, 1.0, K + 1) ** 2 * 1e3  # irregular floats, not short decimals
    flow = np.arange(F)
    return Schedule.from_segments(bps, flow, 1.0 / (flow + 3.0), np.zeros(F, np.int64),
                                  np.full(F, K), meta={"scheduler": "hand"})


def _bit_identical(a: Schedule, b: Schedule) -> None:
    for name in ("breakpoints", "flow", "first", "last", "rate"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert x.tobytes() == y.tobytes(), name


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(instances(), st.sampled_from(["s.json", "s.json.gz"]),
       st.sampled_from(["segments", "intervals"]))
def test_both_forms_round_trip_and_validate_alike(tmp_path, inst: Instance, name: str,
                                                  form: str) -> None:
    s = sequential(inst)
    p = tmp_path / name
    save_schedule(s, p, form=form)
    opener = gzip.open if name.endswith(".gz") else open
    with opener(p, "rt") as fh:
        d = json.load(fh)
    assert ("segments" in d) == (form == "segments") and ("intervals" in d) == (form != "segments")
    back = load_schedule(p)
    assert back == s
    if form == "segments":
        _bit_identical(back, s)
    v0, v1 = validate(inst, s), validate(inst, back)
    assert np.array_equal(v0.flow_completion, v1.flow_completion)
    assert np.array_equal(v0.coflow_completion, v1.coflow_completion)


def test_sparse_is_the_default_with_exact_field_names(tmp_path) -> None:
    s = sequential(example2())
    save_schedule(s, tmp_path / "s.json")
    d = json.loads((tmp_path / "s.json").read_text())
    assert set(d) <= {"format", "breakpoints", "segments", "meta"}
    assert d["format"] == "coflowopt-schedule/1"
    assert set(d["segments"]) == {"flow", "first", "last", "rate"}
    assert d["segments"] == schedule_to_dict(s, "segments")["segments"]
    assert d["breakpoints"] == s.breakpoints.tolist()


def test_sparse_round_trip_bit_identical_awkward_floats(tmp_path) -> None:
    rng = np.random.default_rng(7)
    K, S = 50, 300
    bps = np.cumsum(rng.random(K + 1) * np.array([1e-12, 1.0, 1e12])[rng.integers(0, 3, K + 1)])
    first = rng.integers(0, K, S)
    last = first + 1 + rng.integers(0, K - first)
    rate = rng.random(S) * 10.0 ** rng.integers(-300, 300, S)
    rate[:3] = [0.0, 5e-324, 1.7976931348623157e308]
    s = Schedule.from_segments(bps, rng.integers(0, 40, S), rate, first, last)
    for name in ("a.json", "a.json.gz"):
        save_schedule(s, tmp_path / name)
        _bit_identical(load_schedule(tmp_path / name), s)
    # the streamed interval form is the same text json.dumps gives for the interval dict
    text = "".join(schedule_json_chunks(s, form="intervals", chunk=7))
    assert text == json.dumps(schedule_to_dict(s), separators=(",", ":"))
    assert "".join(schedule_json_chunks(s, chunk=5)) == json.dumps(
        schedule_to_dict(s, "segments"), separators=(",", ":"))


def test_meta_is_written_and_read_back(tmp_path) -> None:
    s = _many_intervals(K=3, F=2)
    s.meta.update({"params": {"refill": False}, "array": np.zeros(2)})  # the array is skipped
    save_schedule(s, tmp_path / "m.json")
    d = json.loads((tmp_path / "m.json").read_text())
    assert d["meta"] == {"scheduler": "hand", "params": {"refill": False}}
    assert load_schedule(tmp_path / "m.json").meta == d["meta"]


def test_sparse_size_follows_segments_not_intervals(tmp_path) -> None:
    K, F = 2000, 8
    s = _many_intervals(K, F)
    assert s.n_segments == F
    sp, iv = tmp_path / "sparse.json", tmp_path / "intervals.json"
    save_schedule(s, sp)
    save_schedule(s, iv, form="intervals")
    bp = len(",".join(map(repr, s.breakpoints.tolist())))  # the breakpoints: in both forms
    widest = max(len(repr(x)) for x in s.rate.tolist())
    entries = K * F  # (flow, rate) pairs the interval form lists
    sparse_body = sp.stat().st_size - bp
    interval_body = iv.stat().st_size - bp
    # sparse: 4 numbers per segment plus a fixed frame; intervals: >= 2 numbers + 2 commas
    # per entry plus the frame of each interval
    assert sparse_body <= 4 * s.n_segments * (widest + 1) + 200
    assert interval_body >= entries * 4 + K * len('{"flows":[],"rates":[]},')
    assert interval_body / sparse_body >= entries * 4 / (4 * s.n_segments * (widest + 1) + 200)


def test_interrupted_write_leaves_target_untouched(tmp_path, monkeypatch) -> None:
    import coflowopt.interchange as ic

    s = _many_intervals(K=500, F=4)
    for name in ("s.json", "s.json.gz"):
        target = tmp_path / name
        save_schedule(sequential(example2()), target)
        before = target.read_bytes()
        calls = {"n": 0}
        real = ic._join

        def failing(a, real=real, calls=calls):
            calls["n"] += 1
            if calls["n"] == 3:
                raise KeyboardInterrupt("simulated interruption")
            return real(a)

        monkeypatch.setattr(ic, "_join", failing)
        with pytest.raises(KeyboardInterrupt):
            save_schedule(s, target)
        monkeypatch.setattr(ic, "_join", real)
        assert calls["n"] == 3
        assert target.read_bytes() == before
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            n for n in ("s.json", "s.json.gz") if (tmp_path / n).exists())
    # a fresh target that fails mid-write does not appear at all
    monkeypatch.setattr(ic, "_pump", lambda fh, chunks: (fh.write(b"{"), 1 / 0))
    with pytest.raises(ZeroDivisionError):
        save_schedule(s, tmp_path / "new.json")
    assert not (tmp_path / "new.json").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_non_finite_rate_is_refused_before_writing(tmp_path) -> None:
    s = Schedule.from_segments([0.0, 1.0], [0], [float("nan")], [0], [1])
    with pytest.raises(InterchangeError, match=r"segment 0 \(flow 0\) has rate nan"):
        save_schedule(s, tmp_path / "x.json")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="schedule form 'dense'"):
        save_schedule(s, tmp_path / "x.json", form="dense")


def _sparse_doc() -> dict:
    return {"format": "coflowopt-schedule/1", "breakpoints": [0.0, 1.0, 2.0, 4.0],
            "segments": {"flow": [0, 1, 2], "first": [0, 1, 0], "last": [2, 3, 3],
                         "rate": [1.0, 0.5, 0.25]}}


def test_hand_written_sparse_file(tmp_path) -> None:
    p = tmp_path / "s.json"
    p.write_text(json.dumps(_sparse_doc()))
    s = load_schedule(p)
    assert s == Schedule.from_intervals([0, 1, 2, 4], [{0: 1.0, 2: 0.25},
                                                      {0: 1.0, 1: 0.5, 2: 0.25},
                                                      {1: 0.5, 2: 0.25}])
    # integers where floats are expected, and integral floats where integers are, are numbers
    d = _sparse_doc()
    d["breakpoints"] = [0, 1, 2, 4]
    d["segments"]["first"] = [0.0, 1, 0]
    p.write_text(json.dumps(d))
    assert load_schedule(p) == s


def _seg(key: str, i: int, value):
    return lambda d: d["segments"][key].__setitem__(i, value)


@pytest.mark.parametrize("mutate,pattern", [
    (lambda d: d["segments"].pop("rate"), r"segments: missing field 'rate'"),
    (lambda d: d["segments"].__setitem__("last", 3), r"segments\.last: expected a list"),
    (lambda d: d["segments"]["last"].pop(), r"segments: columns differ in length \(flow 3, "
                                            r"first 3, last 2, rate 3\)"),
    (_seg("flow", 1, 1.5), r"segments\.flow\[1\]: 1\.5 is not an integer"),
    (_seg("flow", 2, "2"), r"segments\.flow\[2\]: expected an integer, got '2'"),
    (_seg("flow", 0, True), r"segments\.flow\[0\]: expected an integer, got True"),
    (_seg("flow", 1, -1), r"segments\.flow\[1\]: -1 is negative"),
    (_seg("flow", 1, 2**64), r"segments\.flow\[1\]: 18446744073709551616 is out of range"),
    (_seg("first", 2, -1), r"segments\.first\[2\]: -1 is negative"),
    (_seg("first", 1, None), r"segments\.first\[1\]: expected an integer, got None"),
    (_seg("first", 1, 3), r"segments\.first\[1\]: 3 = last\[1\] 3"),
    (_seg("last", 0, 0), r"segments\.first\[0\]: 0 = last\[0\] 0"),
    (lambda d: (_seg("first", 2, 2)(d), _seg("last", 2, 1)(d)),
     r"segments\.first\[2\]: 2 > last\[2\] 1"),
    (_seg("last", 1, 4), r"segments\.last\[1\]: 4 is beyond the breakpoints \(at most 3 with 4"),
    (_seg("rate", 2, -0.5), r"segments\.rate\[2\]: -0\.5 is negative"),
    (_seg("rate", 1, float("nan")), r"segments\.rate\[1\]: nan is not finite"),
    (_seg("rate", 0, float("inf")), r"segments\.rate\[0\]: inf is not finite"),
    (_seg("rate", 0, [1.0]), r"segments\.rate\[0\]: expected a number, got \[1\.0\]"),
    (lambda d: d["breakpoints"].__setitem__(2, "x"), r"breakpoints\[2\]: expected a number"),
    (lambda d: d["breakpoints"].__setitem__(1, float("inf")), r"breakpoints\[1\]: inf is not "
                                                               r"finite"),
    (lambda d: d.__setitem__("breakpoints", []), r"breakpoints: empty"),
    (lambda d: d.__setitem__("segments", [1, 2]), r"segments: expected an object"),
    (lambda d: d.__setitem__("intervals", []), r"both 'segments' and 'intervals' given"),
    (lambda d: d.pop("segments"), r"missing field 'segments' \(sparse form\) or 'intervals'"),
    (lambda d: d.__setitem__("meta", 3), r"meta: expected an object"),
])
def test_bad_sparse_files_name_the_field(tmp_path, mutate, pattern: str) -> None:
    d = _sparse_doc()
    mutate(d)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(d))  # json writes NaN / Infinity, which json.load accepts
    with pytest.raises(InterchangeError, match=pattern) as exc:
        load_schedule(p)
    assert str(exc.value).startswith(f"{p}: ")


def test_cli_validate_reads_both_forms(tmp_path, capsys) -> None:
    from coflowopt.cli import main

    inst = example2()
    ip = tmp_path / "i.json"
    save_instance(inst, ip)
    for form in ("segments", "intervals"):
        sp_ = tmp_path / f"{form}.json.gz"
        save_schedule(sequential(inst), sp_, form=form)
        assert main(["validate", str(ip), str(sp_)]) == 0
        assert "feasible" in capsys.readouterr().out

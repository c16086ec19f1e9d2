"""The coflow-benchmark trace reader and writer."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt.workloads import (
    GBPS_MB_PER_MS,
    TraceFormatError,
    find_fb2010,
    format_trace,
    parse_trace,
    read_trace,
)


@pytest.fixture(scope="module")
def fb2010():
    path = find_fb2010()
    if path is None:
        pytest.skip("FB2010 trace not found (set COFLOWOPT_FB2010)")
    return path


def test_fb2010_totals(fb2010) -> None:
    # figures from shared/data/fb2010/FORMAT.md
    inst = read_trace(fb2010)
    assert (inst.ports, inst.n_coflows, inst.n_flows) == (150, 526, 706_397)
    assert inst.coflow_size.sum() == 35_533_534
    assert inst.coflow_size.max() == 8_501_205
    assert inst.coflow_size.min() == 1
    assert inst.release.max() == 3_629_235
    assert inst.time_unit == "ms"
    assert inst.fabric.capacity_in[0] == GBPS_MB_PER_MS
    # every flow a whole MB, the evenly split convention
    assert np.all(inst.flow_volume == np.round(inst.flow_volume))


def test_fb2010_text_round_trip(fb2010) -> None:
    text = fb2010.read_text()
    assert format_trace(parse_trace(text)) == text


def test_even_split_convention() -> None:
    # coflow 2 of FB2010: 2 mappers (104, 132) and one reducer 140 receiving 48 MB
    inst = parse_trace("150 1\n2 10833 2 104 132 1 140:48.0\n")
    assert inst.flow_src.tolist() == [104, 132]
    assert inst.flow_dst.tolist() == [140, 140]
    assert inst.flow_volume.tolist() == [24.0, 24.0]
    assert inst.coflow_id.tolist() == [2]
    assert inst.release.tolist() == [10833.0]
    # 48 MB through one egress port at 0.125 MB/ms -> 384 ms alone (CoflowSim's sebf.csv: 384)
    assert inst.isolation_time.tolist() == [384.0]


def test_round_to_mappers() -> None:
    inst = parse_trace("4 1\n1 0 3 0 1 2 2 0:4.0 3:6.0\n", round_to_mappers=True)
    # 4 MB over 3 mappers -> 6 MB (2 per flow); 6 stays 6
    assert inst.coflow_size.tolist() == [12.0]
    assert sorted(set(inst.flow_volume.tolist())) == [2.0]


@st.composite
def trace_texts(draw, integer=True):
    m = draw(st.integers(1, 12))
    n = draw(st.integers(0, 6))
    lines = [f"{m} {n}"]
    t = 0
    for cid in draw(st.lists(st.integers(1, 10_000), min_size=n, max_size=n, unique=True)):
        t += draw(st.integers(0, 5000))
        maps = draw(st.lists(st.integers(0, m - 1), min_size=1, max_size=m, unique=True))
        reds = draw(st.lists(st.integers(0, m - 1), min_size=1, max_size=m, unique=True))
        if integer:
            sizes = [float(draw(st.integers(1, 10**7))) for _ in reds]
        else:
            sizes = [draw(st.floats(1e-3, 1e6, allow_nan=False)) for _ in reds]
        fields = [cid, t, len(maps), *maps, len(reds)]
        fields += [f"{r}:{s!r}" for r, s in zip(reds, sizes, strict=True)]
        lines.append(" ".join(map(str, fields)))
    return "\n".join(lines) + "\n"


@settings(max_examples=60, deadline=None)
@given(trace_texts())
def test_text_round_trip_whole_mb(text: str) -> None:
    inst = parse_trace(text)
    assert format_trace(inst) == text
    assert parse_trace(format_trace(inst)) == inst


@settings(max_examples=60, deadline=None)
@given(trace_texts(integer=False))
def test_instance_round_trip_any_mb(text: str) -> None:
    inst = parse_trace(text)
    again = parse_trace(format_trace(inst))
    assert again == inst


@pytest.mark.parametrize("text,line,field", [
    ("", 1, "header"),
    ("150\n", 1, "header"),
    ("x 1\n1 0 1 0 1 0:1.0\n", 1, "num_ports"),
    ("4 2\n1 0 1 0 1 0:1.0\n", 2, "num_coflows"),
    ("4 1\n1 0 1 0 1 0:1.0\n2 0 1 0 1 0:1.0\n", 3, "num_coflows"),
    ("4 1\n1 zero 1 0 1 0:1.0\n", 2, "arrival_ms"),
    ("4 1\n1 0 2 0 1 0:1.0\n", 2, "R"),
    ("4 1\n1 0 1 9 1 0:1.0\n", 2, "map_loc_1"),
    ("4 1\n1 0 2 1 1 1 0:1.0\n", 2, "map_loc_2"),
    ("4 1\n1 0 1 0 1 0-1.0\n", 2, "red_loc_1"),
    ("4 1\n1 0 1 0 2 0:1.0 3:abc\n", 2, "MB_2"),
    ("4 1\n1 0 1 0 1 0:-4\n", 2, "MB_1"),
    ("4 1\n1 0 1 0 1 7:1.0\n", 2, "red_loc_1"),
    ("4 2\n1 0 1 0 1 0:1.0\n1 5 1 0 1 0:1.0\n", 3, "coflow_id"),
    ("4 1\n1 0 0 1 0:1.0\n", 2, "M"),
])
def test_malformed_lines(text: str, line: int, field: str, tmp_path) -> None:
    p = tmp_path / "bad.txt"
    p.write_text(text)
    with pytest.raises(TraceFormatError) as exc:
        read_trace(p)
    assert exc.value.line == line
    assert exc.value.field == field
    assert str(p) in str(exc.value) and f":{line}:" in str(exc.value)


def test_missing_file_says_where_to_get_it(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="coflow-benchmark"):
        read_trace(tmp_path / "nope.txt")


def test_writer_refuses_what_the_format_cannot_hold() -> None:
    from coflowopt import build_instance

    uneven = build_instance(3, coflows=[[(0, 2, 1.0), (1, 2, 2.0)]])
    with pytest.raises(ValueError, match="not split evenly"):
        format_trace(uneven)
    partial = build_instance(3, coflows=[[(0, 1, 1.0), (1, 2, 1.0)]])
    with pytest.raises(ValueError, match="full mapper x reducer"):
        format_trace(partial)


def test_resolve_trace_finds_the_trace_by_name_or_says_where_it_looked(tmp_path, monkeypatch):
    from coflowopt.workloads.trace import FB2010_NAME, resolve_trace

    fake = tmp_path / "elsewhere" / FB2010_NAME
    fake.parent.mkdir()
    fake.write_text("1 1\n")
    monkeypatch.setenv("COFLOWOPT_FB2010", str(fake))
    monkeypatch.chdir(tmp_path)
    assert resolve_trace(FB2010_NAME) == fake  # a bare name not here: the located trace
    assert resolve_trace("fb2010") == fake
    own = tmp_path / "mine.txt"
    own.write_text("1 1\n")
    assert resolve_trace(own) == own
    with pytest.raises(FileNotFoundError, match=r"nothere\.txt: no such file"):
        resolve_trace("nothere.txt")
    monkeypatch.setenv("COFLOWOPT_FB2010", str(tmp_path / "gone.txt"))
    with pytest.raises(FileNotFoundError, match=r"gone\.txt \(not a file\)"):
        resolve_trace(FB2010_NAME)


def test_batch_drops_the_arrivals(tmp_path) -> None:
    """``batch=True``: same flows, every release 0; through the ``trace`` generator too."""
    from coflowopt.workloads import build

    text = "4 2\n1 0 1 0 1 1:3.0\n2 250 2 1 2 1 3:8.0\n"
    online = parse_trace(text)
    batch = parse_trace(text, batch=True)
    assert online.release.tolist() == [0.0, 250.0]
    assert batch.release.tolist() == [0.0, 0.0]
    assert batch.job_release.tolist() == [0.0, 0.0]
    assert batch.flow_volume.tolist() == [3.0, 4.0, 4.0]
    assert batch.coflow_id.tolist() == [1, 2]
    f = tmp_path / "t.txt"
    f.write_text(text)
    assert read_trace(f, batch=True).release.tolist() == [0.0, 0.0]
    assert build("trace", {"path": str(f), "batch": True}).release.tolist() == [0.0, 0.0]
    with pytest.raises(TraceFormatError, match="arrival_ms"):
        parse_trace("4 1\n1 -5 1 0 1 1:3.0\n", batch=True)


def test_blank_line_is_reported_where_it_is() -> None:
    # 3 coflows declared; line 3 is blank, so the body has 4 lines: the error is at line 3
    # (not at the end, as a count mismatch)
    text = "4 3\n1 0 1 0 1 1:1.0\n\n2 0 1 0 1 2:1.0\n3 0 1 0 1 3:1.0\n"
    with pytest.raises(TraceFormatError) as exc:
        parse_trace(text, path="t.txt")
    assert (exc.value.line, str(exc.value)) == (3, "t.txt:3: field coflow: blank line; "
                                                   "expected a coflow")
    # trailing blank lines stay harmless
    assert parse_trace("4 1\n1 0 1 0 1 1:1.0\n\n\n").n_coflows == 1

"""Property tests (hypothesis) for everything that reads user files: the CSV, UK-DALE and REFIT loaders
(nilmbuild/data/loaders.py) and the capture blob decoder (nilmbuild/capture/format.py).

Arbitrary bytes, generated files and mutated valid files must give either a clean load or a one-line
nilmbuild.errors.UserError: never another exception (a traceback for the user), never a hang (each
example runs under an alarm), and never a value the format cannot mean (inf power, a record of the
wrong shape). NaN is the documented "missing" marker in a Household, so it is allowed there; f16 data
bytes can legitimately spell NaN too (the blob has no checksum), so decoded values are not checked.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nilmbuild.capture import decode, encode
from nilmbuild.data.loaders import load_csv, load_refit, load_ukdale
from nilmbuild.errors import UserError

DEEP = int(os.environ.get("NILMBUILD_FUZZ_EXAMPLES", "0"))  # e.g. 2000 for a long local run (random seeds)
SETTINGS = settings(
    max_examples=DEEP or 50,
    deadline=5000,
    derandomize=not DEEP,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
ALARM_S = 20


@contextlib.contextmanager
def no_hang(seconds=ALARM_S):
    def boom(*_):
        raise TimeoutError(f"reader hung for more than {seconds} s")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def user_error_or(fn):
    """fn() -> its result, or None for a one-line UserError; anything else propagates (test failure)."""
    with no_hang():
        try:
            return fn()
        except UserError as e:
            msg = str(e)
            assert msg and "\n" not in msg, f"UserError not one line: {msg!r}"
            return None


def check_household(h):
    h.check()
    for name, v in [("aggregate", h.aggregate), *h.appliances.items()]:
        assert v.dtype == np.float32, name
        assert not np.isinf(v).any(), f"{name}: inf in the loaded power"
        assert not np.isnan(v).all(), f"{name}: all missing, should have been a UserError"
    assert h.appliances and h.rate_s >= 1


def mutate(data: bytes, edits) -> bytes:
    """Apply (op, position, byte) edits: 0 flip a byte, 1 delete one, 2 insert one, 3 truncate."""
    b = bytearray(data)
    for op, pos, val in edits:
        if not b:
            break
        i = pos % len(b)
        if op == 0:
            b[i] ^= val or 1
        elif op == 1:
            del b[i]
        elif op == 2:
            b.insert(i, val)
        else:
            del b[i:]
    return bytes(b)


EDITS = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=6)

# ---- CSV ------------------------------------------------------------------------------------------

VALID_CSV = (
    "time,aggregate,kettle,fridge\n"
    + "".join(
        f"2024-01-01 00:{m:02d}:00,{300 + 7 * m},{2000 if m % 5 == 0 else 0},{80 if m % 3 else 0}\n" for m in range(12)
    )
).encode()
CELLS = st.sampled_from(
    [
        "",
        "0",
        "12.5",
        "-3",
        "nan",
        "inf",
        "-inf",
        "1e999",
        "abc",
        "2024-01-01 00:00:00",
        "1704067200",
        " ",
        '"x,y"',
        "\x00",
        "1,2",
        "2024-13-45",
        "NaT",
        "+",
    ]
)
HEADERS = st.lists(
    st.sampled_from(
        [
            "time",
            "unix",
            "aggregate",
            "mains",
            "kettle",
            "fridge",
            "microwave",
            "dish washer",
            "x",
            "",
            "kettle_status",
            "time",
        ]
    ),
    min_size=1,
    max_size=6,
)


@st.composite
def csv_texts(draw):
    head = draw(HEADERS)
    rows = draw(st.lists(st.lists(CELLS, min_size=len(head), max_size=len(head) + 1), max_size=8))
    return (",".join(head) + "\n" + "".join(",".join(r) + "\n" for r in rows)).encode()


@st.composite
def csv_nearly_valid(draw):
    """time, aggregate and appliance columns with increasing times; some cells odd (inf, text, empty)."""
    cols = [
        "time",
        "aggregate",
        *draw(st.lists(st.sampled_from(["kettle", "fridge", "microwave"]), min_size=1, max_size=3, unique=True)),
    ]
    n = draw(st.integers(1, 8))
    times = [draw(st.sampled_from([f"2024-01-01 00:{m:02d}:00", str(1704067200 + 60 * m)])) for m in range(n)]
    if len(set(t[:4] for t in times)) > 1:
        times = [f"2024-01-01 00:{m:02d}:00" for m in range(n)]
    rows = [[t] + [draw(st.one_of(st.sampled_from(["5", "2000.5", "0"]), CELLS)) for _ in cols[1:]] for t in times]
    return (",".join(cols) + "\n" + "".join(",".join(r) + "\n" for r in rows)).encode()


def load_bytes(data: bytes, name: str, load):
    """Write `data` as `name` in a fresh folder and run `load(folder, file)`: a Household (checked) or None
    after a UserError; anything else fails the test."""
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / name
        p.write_bytes(data)
        h = user_error_or(lambda: load(Path(d), p))
    if h is not None:
        check_household(h)
    return h


def load_csv_bytes(data: bytes, name="x.csv"):
    return load_bytes(data, name, lambda folder, file: load_csv(file))


def test_valid_csv_loads():
    h = load_csv_bytes(VALID_CSV)
    assert h is not None and len(h) == 12 and h.appliances["kettle"][0] == 2000


@SETTINGS
@given(st.binary(max_size=600))
def test_csv_arbitrary_bytes(data):
    load_csv_bytes(data)


@SETTINGS
@given(st.binary(max_size=300))
def test_csv_gz_arbitrary_bytes(data):
    load_csv_bytes(data, "x.csv.gz")


@SETTINGS
@given(csv_texts())
def test_csv_generated_tables(data):
    load_csv_bytes(data)


@SETTINGS
@given(csv_nearly_valid())
def test_csv_nearly_valid_tables(data):
    load_csv_bytes(data)


@SETTINGS
@given(EDITS)
def test_csv_mutated_valid_file(edits):
    load_csv_bytes(mutate(VALID_CSV, edits))


# ---- UK-DALE --------------------------------------------------------------------------------------

VALID_HOUSE = {
    "labels.dat": b"1 aggregate\n2 kettle\n3 fridge\n",
    "channel_1.dat": b"".join(b"%d %d\n" % (1_700_000_000 + 6 * i, 300 + i) for i in range(20)),
    "channel_2.dat": b"".join(b"%d %d\n" % (1_700_000_001 + 6 * i, 2000 * (i % 4 == 0)) for i in range(20)),
    "channel_3.dat": b"".join(b"%d %d\n" % (1_700_000_002 + 6 * i, 80) for i in range(20)),
}


def load_house(files: dict[str, bytes]):
    with tempfile.TemporaryDirectory() as d:
        h = Path(d) / "house_1"
        h.mkdir()
        for name, data in files.items():
            (h / name).write_bytes(data)
        hh = user_error_or(lambda: load_ukdale(Path(d), house=1))
    if hh is not None:
        check_household(hh)
    return hh


def test_valid_ukdale_house_loads():
    h = load_house(VALID_HOUSE)
    assert h is not None and len(h) == 20 and set(h.appliances) == {"kettle", "fridge"}


@SETTINGS
@given(st.sampled_from(sorted(VALID_HOUSE)), st.binary(max_size=400))
def test_ukdale_one_file_arbitrary_bytes(name, data):
    load_house({**VALID_HOUSE, name: data})


TOKENS = st.sampled_from(["1700000000", "1700000006", "1e300", "-5", "inf", "nan", "300", "2000.5", "x", "", "1 2"])


@SETTINGS
@given(
    st.sampled_from(["channel_1.dat", "channel_2.dat"]),
    st.lists(st.tuples(st.integers(0, 40), TOKENS), min_size=1, max_size=8),
)
def test_ukdale_channel_generated_lines(name, lines):
    """Increasing timestamps with one odd token per line (inf, nan, 1e300, text) in either column."""
    body = b"".join(
        b"%d %s\n" % (1_700_000_000 + 6 * i, v.encode()) if k % 2 else b"%s %d\n" % (v.encode(), 300)
        for i, (k, v) in enumerate(lines)
    )
    load_house({**VALID_HOUSE, name: body})


@SETTINGS
@given(st.sampled_from(sorted(VALID_HOUSE)), EDITS)
def test_ukdale_one_file_mutated(name, edits):
    load_house({**VALID_HOUSE, name: mutate(VALID_HOUSE[name], edits)})


# ---- REFIT ----------------------------------------------------------------------------------------

REFIT_HEAD = "Time,Unix,Aggregate," + ",".join(f"Appliance{i}" for i in range(1, 10)) + ",Issues\n"
VALID_REFIT = (
    REFIT_HEAD
    + "".join(
        f"2014-03-01 00:00:{s:02d},{1393632000 + s},{500 + s},80,0,0,0,{900 * (s % 2)},0,0,{2000 * (s % 3 == 0)},0,0\n"
        for s in range(0, 60, 6)
    )
).encode()


def load_refit_bytes(data: bytes):
    return load_bytes(data, "CLEAN_House2.csv", lambda folder, file: load_refit(folder, house=2))


def test_valid_refit_loads():
    h = load_refit_bytes(VALID_REFIT)
    assert h is not None and len(h) == 10 and h.appliances["kettle"][0] == 2000


@SETTINGS
@given(EDITS)
def test_refit_mutated_valid_file(edits):
    load_refit_bytes(mutate(VALID_REFIT, edits))


@SETTINGS
@given(st.binary(max_size=400))
def test_refit_arbitrary_bytes(data):
    load_refit_bytes(REFIT_HEAD.encode() + data)


# ---- capture blob ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def valid_blob():
    from test_format import special_capture

    return encode(special_capture())


def read_blob(data: bytes):
    """decode + materialise every record: UserError or arrays of each record's declared shape."""

    def run():
        r = decode(data)
        for n in r.names():
            a = r.get(n)
            assert isinstance(a, np.ndarray) and a.dtype == np.float32, n
            assert list(a.shape) == list(r.record(n)["shape"]), n
        return r

    return user_error_or(run)


def test_valid_blob_reads(valid_blob):
    r = read_blob(valid_blob)
    assert r is not None and "half.all" in r.names()


@SETTINGS
@given(st.binary(max_size=600))
def test_blob_arbitrary_bytes(data):
    read_blob(data)


@settings(SETTINGS, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(EDITS)
def test_blob_mutated_valid(valid_blob, edits):
    read_blob(mutate(valid_blob, edits))

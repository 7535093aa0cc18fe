"""'perfport wg dataset' with described stencils (a user's own, from a .json file) tuned into a
store: their campaigns become scenarios like the built-ins', with the features the daemon and
'wg predict' compute for them, and one whose stored description cannot be rebuilt is left out
saying why."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from conftest import fill_wg_campaign
from perfport.cli import main
from perfport.features import scenario_features
from perfport.kernels import described_stencil_file
from perfport.store import Store
from perfport.wg import dataset_from_store, load_dataset

OWN = {
    "cross": {"name": "cross", "body": "return (OUT)(GET(0, -2) + GET(0, 2) + GET(-1, 0));",
              "north": 2, "south": 2, "west": 1},
    # Offsets of a loop: the guarded template; and types of its own.
    "ring": {"name": "ring", "body": "ELEM s = 0; for (int d = 1; d <= 2; ++d) s += GET(d, 0); "
             "return (OUT)s;", "east": 2, "dtype": "int"},
}  # fmt: skip
PROBLEMS = (("width=32", "height=32"), ("width=48", "height=16"))
CONFIGS = [{"wc": 4, "wr": 4}, {"wc": 8, "wr": 4}, {"wc": 16, "wr": 1}, {"wc": 32, "wr": 4}]


@pytest.fixture(scope="module")
def stores(tmp_path_factory, cpu):
    """A store of a built-in stencil's campaign, and one more with the described stencils of
    OWN, each tuned over CONFIGS (a complete campaign) at each of PROBLEMS."""
    tmp = tmp_path_factory.mktemp("own")
    built_in, mixed = tmp / "builtin.db", tmp / "mixed.db"
    for db in (built_in, mixed):
        with Store(db) as store:
            fill_wg_campaign(store, cpu, "heat", {"width": 64, "height": 64}, 1.0)
    configs = tmp / "configs.json"
    configs.write_text(json.dumps(CONFIGS))
    for name, description in OWN.items():
        (tmp / f"{name}.json").write_text(json.dumps(description))
        for problem in PROBLEMS:
            argv = ["tune", str(tmp / f"{name}.json"), "--problem", *problem, "--configs",
                    str(configs), "--repeats", "1", "--confirm", "0", "--db", str(mixed)]  # fmt: skip
            assert main(argv) == 0
    return tmp, built_in, mixed, cpu


def _dataset(argv, capsys):
    assert main(["wg", "dataset", *map(str, argv), "--json"]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


def test_described_stencils_campaigns_join_the_dataset(stores, capsys):
    # They were left out ("a dataset holds the built-in stencils"): a user who tuned their own
    # stencils could not train the predictor on them.
    tmp, built_in, mixed, cpu = stores
    out = tmp / "mixed.npz"
    summary, notes = _dataset(["--db", mixed, "--out", out], capsys)
    assert summary["scenarios"] == 1 + len(OWN) * len(PROBLEMS) and not notes
    assert summary["described_stencils"] == sorted(OWN) and summary["left_out"] == {}
    assert summary["described_scenarios"] == len(OWN) * len(PROBLEMS)
    data = load_dataset(out)
    assert data.kernel.tolist() == ["heat", "cross", "cross", "ring", "ring"]
    assert not data.synthetic.any() and data.dataset.tolist()[1:3] == ["32x32:float", "48x16:float"]
    assert data.dataset.tolist()[3] == "32x32:int"
    # The features 'wg predict' and the daemon compute for the .json file (same path).
    for row in range(1, len(data)):
        spec = described_stencil_file(tmp / f"{data.kernel[row]}.json")
        width, height = (int(n) for n in data.dataset[row].split(":")[0].split("x"))
        expected = scenario_features(spec, {"width": width, "height": height}, cpu).as_array()
        assert np.allclose(data.features[row], expected, rtol=1e-12, atol=0)
        assert np.isfinite(data.runtimes[row]).sum() == len(CONFIGS)
    # The built-in scenarios are as a store of them alone gives them.
    with Store(built_in, create=False) as store:
        alone = dataset_from_store(store)
    columns = [data.column(int(wc), int(wr)) for wc, wr in alone.sizes]
    assert np.array_equal(data.runtimes[:1, columns], alone.runtimes, equal_nan=True)
    assert np.array_equal(data.features[:1], alone.features)
    # 'wg train' and 'wg evaluate' take it.
    assert main(["wg", "train", "--data", str(out), "--method", "performance_knn",
                 "--out", str(tmp / "own.model")]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["wg", "evaluate", "--data", str(out), "--methods", "performance_knn",
                 "--partitions", "kernel", "--json"]) == 0  # fmt: skip
    (result,) = json.loads(capsys.readouterr().out)["results"]
    assert result["partition"] == "kernel" and result["scenarios"] == len(data)


def test_a_described_stencil_that_cannot_be_rebuilt_is_left_out_saying_why(stores, capsys):
    tmp, _, mixed, _ = stores
    damaged = tmp / "damaged.db"
    damaged.write_bytes(mixed.read_bytes())
    with sqlite3.connect(damaged) as conn:  # the descriptions its campaigns ran with
        conn.execute("UPDATE kernels SET spec = '{}' WHERE name = 'ring'")
        conn.execute("UPDATE campaign_specs SET spec = '{}' WHERE campaign_id IN (SELECT g.id "
                     "FROM campaigns g JOIN kernels k ON k.id = g.kernel_id WHERE k.name = 'ring')")  # fmt: skip
    conn.close()
    summary, notes = _dataset(["--db", damaged, "--out", tmp / "damaged.npz"], capsys)
    assert summary["scenarios"] == 1 + len(PROBLEMS) and summary["described_stencils"] == ["cross"]
    assert summary["left_out"] == {str(damaged): ["ring"]}
    why = summary["left_out_why"][str(damaged)]["ring"]
    assert "description is missing or damaged" in why
    assert notes == f"perfport: note: {damaged}: left out the campaigns of ring ({why})\n"
    assert "ring" not in load_dataset(tmp / "damaged.npz").kernel.tolist()


def test_each_description_of_one_kernel_is_a_scenario_with_its_features(stores, capsys):
    # Borders are defines, not in the source: a spec edited to other borders under its name is
    # the same kernel row (its first description). Both campaigns were one scenario, each
    # size's time the faster of the two, with the first description's features.
    tmp, _, _, cpu = stores
    db, configs = tmp / "edited.db", tmp / "configs.json"
    wide = {**OWN["cross"], "north": 8, "south": 8, "west": 8, "east": 8}
    (tmp / "cross_wide.json").write_text(json.dumps(wide))
    problem = ("width=32", "height=32")
    for name in ("cross", "cross_wide"):
        argv = ["tune", str(tmp / f"{name}.json"), "--problem", *problem, "--configs",
                str(configs), "--repeats", "1", "--confirm", "0", "--db", str(db)]  # fmt: skip
        assert main(argv) == 0
    capsys.readouterr()
    summary, _ = _dataset(["--db", db, "--out", tmp / "edited.npz"], capsys)
    assert summary["scenarios"] == 2 and summary["described_stencils"] == ["cross"]
    data = load_dataset(tmp / "edited.npz")
    assert data.kernel.tolist() == ["cross", "cross"]
    with Store(db, create=False) as store:  # one kernel row, two campaigns
        (counts,) = store.query("SELECT count(DISTINCT kernel_id), count(*) FROM campaigns")
        assert tuple(counts) == (1, 2)
    for row, name in enumerate(("cross", "cross_wide")):
        spec = described_stencil_file(tmp / f"{name}.json")
        expected = scenario_features(spec, {"width": 32, "height": 32}, cpu).as_array()
        assert np.allclose(data.features[row], expected, rtol=1e-12, atol=0)
    names = list(data.feature_names)
    assert data.features[:, names.index("kernel_north")].tolist() == [2, 8]
    assert np.isfinite(data.runtimes).sum(axis=1).tolist() == [len(CONFIGS)] * 2
    # Campaigns stored before schema 11 (no description of their own) read their kernel's.
    older = tmp / "older.db"
    older.write_bytes(db.read_bytes())
    with sqlite3.connect(older) as conn:
        conn.execute("DELETE FROM campaign_specs")
    conn.close()
    summary, _ = _dataset(["--db", older, "--out", tmp / "older.npz"], capsys)
    assert summary["scenarios"] == 1
    assert load_dataset(tmp / "older.npz").features[0, names.index("kernel_north")] == 2

"""``forestimp rank`` and ``select`` split text and category columns natively (issue #52): one
row and one column each, missing values routed, every selection method, and ``--one-hot``
for the encoded levels."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from forestimp.cli import main

LEVELS = 300


def run_json(argv: list[str], capsys) -> tuple[dict, str]:
    """``(report, stderr)`` of ``forestimp argv --output json``."""
    extra = ["--no-progress"] if argv[0] == "select" else []
    assert main([*argv, "--output", "json", *extra]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


def rows_of(report: dict) -> dict[str, dict]:
    return {r["feature"]: r for r in report["features"]}


@pytest.fixture(scope="module")
def shops(tmp_path_factory):
    """``shop`` (300 levels, 5 % missing) decides ``label`` with ``x``; ``brand`` (300
    levels) and ``noise`` are noise."""
    rng = np.random.default_rng(0)
    n = 2000
    names = np.array([f"L{i:03d}" for i in range(LEVELS)])
    effect = rng.normal(size=LEVELS)
    shop = rng.integers(0, LEVELS, n)
    df = pd.DataFrame({
        "noise": rng.normal(size=n),
        "shop": names[shop],
        "brand": names[rng.integers(0, LEVELS, n)],
        "x": rng.normal(size=n),
    })  # fmt: skip
    df["label"] = np.where(effect[shop] + 0.5 * df["x"] + 0.3 * rng.normal(size=n) > 0, "yes", "no")
    df.loc[rng.random(n) < 0.05, "shop"] = None
    path = tmp_path_factory.mktemp("categorical") / "shops.csv"
    df.to_csv(path, index=False)
    return path, df


def test_rank_gives_one_row_per_column_natively_and_with_one_hot(shops, capsys):
    path, df = shops
    argv = ["rank", str(path), "--target", "label", "--n-estimators", "100"]
    native, err = run_json(argv, capsys)
    assert native["encoding"] == "native" and native["categorical_columns"] == ["shop", "brand"]
    assert (native["n_features"], native["n_encoded"]) == (4, 4)
    assert {r: v["n_columns"] for r, v in rows_of(native).items()} == dict.fromkeys(
        ["shop", "x", "noise", "brand"], 1
    )
    assert "categorical columns, split natively: shop, brand" in err
    one_hot, err = run_json([*argv, "--one-hot"], capsys)
    assert one_hot["encoding"] == "one-hot" and one_hot["n_encoded"] == 2 + 301 + LEVELS
    counts = {r: v["n_columns"] for r, v in rows_of(one_hot).items()}
    assert counts == {"shop": 301, "brand": LEVELS, "x": 1, "noise": 1}  # shop: NaN a level
    assert "one-hot encoding non-numeric columns: shop, brand" in err
    # A split on a set of the 300 shops learns them better than 301 dummies one at a time.
    assert native["oob_score"] > one_hot["oob_score"] + 0.03, (native, one_hot)


@pytest.mark.parametrize("measure", ["permutation", "air", "mdi_oob"])
def test_an_informative_text_column_ranks_above_noise(shops, capsys, measure):
    path, _ = shops
    argv = ["rank", str(path), "--target", "label", "--n-estimators", "100"]
    report, _ = run_json([*argv, "--measure", measure], capsys)
    order = [r["feature"] for r in report["features"]]
    assert order[:2] == ["shop", "x"], order
    brand, shop = rows_of(report)["brand"], rows_of(report)["shop"]
    # 300 levels of noise: out of bag, about 0 whatever the number of levels. (MDI-oob keeps
    # a small positive bias on such a column, 0.006 to 0.011 over seeds with or without the
    # category penalty, against ~0.2 for shop.)
    if measure == "mdi_oob":
        assert abs(brand["importance"]) < 0.1 * shop["importance"], (brand, shop)
    else:
        assert abs(brand["importance"]) < 3 * brand["standard_error"] + 0.005, brand


@pytest.mark.parametrize("model", ["rf", "hist", "et", "trt", "patches"])
def test_every_native_model_splits_the_categories(tmp_path, capsys, model):
    rng = np.random.default_rng(2)
    n = 400
    df = pd.DataFrame({"colour": rng.choice(list("abcdefgh"), n), "noise": rng.normal(size=n)})
    df["y"] = df["colour"].isin(list("aceg")).astype(int)  # no order of the letters helps
    path = tmp_path / "colours.csv"
    df.to_csv(path, index=False)
    argv = ["rank", str(path), "--target", "y", "--model", model, "--n-estimators", "50"]
    report, _ = run_json(argv, capsys)
    assert report["encoding"] == "native" and report["features"][0]["feature"] == "colour"
    # A set of 4 letters to each side, in no order of the letters: one split separates y.
    assert report["oob_score"] > 0.9


def test_missing_text_values_are_kept_and_their_side_learned(tmp_path, capsys):
    rng = np.random.default_rng(3)
    n = 400
    town = pd.Series(rng.choice(["a", "b", "c"], n), dtype=object)
    town[rng.random(n) < 0.25] = None
    df = pd.DataFrame({"town": town, "noise": rng.normal(size=n)})
    df["y"] = (df["town"].isna() | (df["town"] == "a")).astype(int)  # missing goes with "a"
    path = tmp_path / "towns.csv"
    df.to_csv(path, index=False)
    argv = ["rank", str(path), "--target", "y", "--n-estimators", "50"]
    report, err = run_json(argv, capsys)
    assert report["missing_values"] == {"town": int(town.isna().sum())}
    assert f"missing values in town ({int(town.isna().sum())})" in err
    assert rows_of(report)["town"]["n_columns"] == 1
    assert report["features"][0]["feature"] == "town" and report["oob_score"] > 0.97


def test_parquet_category_columns_are_categorical(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(4)
    n = 300
    shop = rng.choice(["p", "q", "r"], n)
    df = pd.DataFrame({
        "shop": pd.Categorical(shop, categories=["r", "q", "p"]),  # kept in this order
        "x": rng.normal(size=n),
    })  # fmt: skip
    df["y"] = (shop != "q").astype(int)  # {r, p}: not an interval of the category order
    path = tmp_path / "shops.parquet"
    df.to_parquet(path)
    report, _ = run_json(["rank", str(path), "--target", "y", "--n-estimators", "50"], capsys)
    assert report["categorical_columns"] == ["shop"] and report["n_encoded"] == 2
    assert report["features"][0]["feature"] == "shop" and report["oob_score"] == 1.0


def test_category_codes_follow_the_categories_and_keep_missing_values():
    from forestimp._cli_table import encode

    grade = pd.Categorical([3, 1, None, 3, 2, 1], categories=[3, 2, 1])  # numbers, as a set
    df = pd.DataFrame({"grade": grade, "town": ["b", "a", "b", None, "a", "c"], "y": [0, 1] * 3})
    table = encode(df, "y", [], "frame.csv")
    assert table.text == ["grade", "town"] and table.categorical.tolist() == [True, True]
    np.testing.assert_array_equal(table.X[:, 0], [0, 2, np.nan, 0, 1, 2])  # dtype's order
    np.testing.assert_array_equal(table.X[:, 1], [1, 0, 1, np.nan, 0, 2])  # sorted values
    assert table.missing == {"grade": 1, "town": 1}


def test_select_keeps_and_drops_whole_text_columns(shops, capsys):
    path, _ = shops
    argv = ["select", str(path), "--target", "label", "--method", "threshold"]
    report, _ = run_json(argv, capsys)
    status = {r["feature"]: r["status"] for r in report["features"]}
    assert report["encoding"] == "native" and report["n_encoded"] == 4
    assert status["shop"] == "kept" and status["brand"] == "dropped", status
    assert [r["n_columns"] for r in report["features"]] == [1, 1, 1, 1]
    report, _ = run_json([*argv, "--one-hot"], capsys)
    shop = rows_of(report)["shop"]
    assert (shop["status"], shop["n_columns"], len(report["features"])) == ("kept", 301, 4)


@pytest.fixture
def small(tmp_path):
    """``y`` is the XOR of ``colour == "red"`` and ``x > 0``; ``noise`` is noise."""
    rng = np.random.default_rng(5)
    n = 200
    df = pd.DataFrame({"colour": rng.choice(["red", "blue", "green"], n), "x": rng.normal(size=n)})
    df["noise"] = rng.normal(size=n)
    df["y"] = ((df["colour"] == "red") ^ (df["x"] > 0)).astype(int)
    path = tmp_path / "small.csv"
    df.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("method", ["threshold", "boruta"])
def test_select_splits_categories_natively(small, capsys, method):
    argv = ["select", str(small), "--target", "y", "--method", method, "--n-estimators", "50"]
    report, _ = run_json(argv, capsys)
    assert report["encoding"] == "native" and report["n_encoded"] == 3
    status = {r["feature"]: (r["status"], r["n_columns"]) for r in report["features"]}
    kept = "kept" if method == "threshold" else "confirmed"
    assert status["colour"] == status["x"] == (kept, 1), status


def test_boruta_refuses_missing_text_values_and_names_one_hot(shops, capsys):
    path, _ = shops
    with pytest.raises(SystemExit) as info:
        main(["select", str(path), "--target", "label", "--no-progress"])
    assert info.value.code == 2
    line = capsys.readouterr().err.rstrip("\n").splitlines()[-1]
    assert "boruta needs complete features: missing values in shop" in line
    assert "--one-hot (a missing text value is then a level)" in line


@pytest.mark.parametrize("method", ["threshold", "boruta", "rfe", "srs"])
def test_every_selection_method_splits_categories_natively(small, capsys, method):
    argv = ["select", str(small), "--target", "y", "--method", method, "--n-estimators", "20"]
    report, _ = run_json(argv, capsys)
    assert report["encoding"] == "native" and rows_of(report)["colour"]["n_columns"] == 1


def test_mixed_value_types_are_refused(tmp_path, capsys):
    # pandas types a long CSV column by chunks of 2**18 rows: numbers, then text.
    n = 2**18 + 10
    codes = np.tile(np.array(["1", "2", "3"]), n // 3 + 1)[:n].astype(object)
    codes[-10:] = "A7"
    df = pd.DataFrame({"code": codes, "y": np.arange(n) % 2})
    path = tmp_path / "mixed.csv"
    df.to_csv(path, index=False)
    with pytest.warns(pd.errors.DtypeWarning), pytest.raises(SystemExit) as info:
        main(["rank", str(path), "--target", "y"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    line = err.rstrip("\n").splitlines()[-1]
    assert line.startswith("forestimp rank: error: column 'code' mixes value types"), line
    assert "1 (int) and 'A7' (str)" in line and "--drop code" in line


def test_one_hot_needs_a_file_and_is_documented(capsys):
    with pytest.raises(SystemExit) as info:
        main(["select", "--one-hot"])
    assert info.value.code == 2
    assert "--one-hot need a FILE" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["rank", "--help"])
    text = capsys.readouterr().out
    assert "--one-hot" in text and "split each natively" in text

"""Seeded fuzzing of the model formats: forest bytes (``Forest.to_bytes``), booster bytes
(``Booster.to_bytes``) and estimator files (``forestimp.save``), damaged and then sealed
again (lengths and checksums right), so that every case reaches the loader's validation.

Every case must either be refused with ``ModelFormatError`` or load into a model whose
predictions and importances are finite, computed without a crash; a memory claim may be
refused with ``MemoryError``. The cases run in a child process under an address-space
limit (an allocation the loader let through fails there instead of exhausting the
machine), which prints each case before running it: a crash names its case.
"""

from __future__ import annotations

import pytest

from conftest import run_fuzz_child

# Each child runs until it has done this many cases or spent this many seconds.
CASES, SECONDS = 2500, 40.0

CHILD = r"""
import json, random, re, resource, sys, time, warnings
import numpy as np

resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
warnings.simplefilter("ignore")
import forestimp
from forestimp import persistence
from forestimp._core import Booster, Forest, ModelFormatError
from model_forge import file_sections, seal, seal_file

seed, cases, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
rng = random.Random(seed)
X = np.random.RandomState(0).rand(80, 4)
X[::7, 1] = np.nan
y_class = (X[:, 0] > 0.5).astype(int) + (X[:, 2] > 0.7)
y_reg = X[:, 0] * 3 + np.nan_to_num(X[:, 1])
Y2 = np.column_stack([y_class, y_class % 2])
E = forestimp
bases = [
    E.RandomForestClassifier(4, max_depth=4, random_state=0).fit(X, y_class),
    E.ExtraTreesRegressor(3, max_depth=3, random_state=0).fit(X, y_reg),
    E.RandomForestRegressor(3, max_depth=3, criterion="absolute_error", random_state=0).fit(
        X, y_reg
    ),
    E.RandomForestClassifier(3, max_depth=3, splitter="hist", random_state=0).fit(X, y_class),
    E.ExtraTreesClassifier(3, max_depth=3, random_state=0).fit(X, Y2),
    E.TotallyRandomizedTreesClassifier(3, max_depth=3, random_state=0).fit(
        np.nan_to_num(X).round(1), y_class
    ),
    E.GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y_class),
    E.GradientBoostingRegressor(n_estimators=3, max_depth=2, random_state=0).fit(X, y_reg),
]
EXTREMES = [0, 1, 2**31 - 1, 2**32 - 1, 2**32, 2**53, 2**63 - 1, 2**64 - 1]
# Values a lying file gives a parameter or a fitted scalar ("@INF@": JSON's 1e999, read as
# infinity), and shapes it gives an array record (with a 0, its body is emptied to match).
ABSURD = [2**63, 2**64, -(2**63) - 1, 10**30, 2**40, -1, 0, 0.5, -0.5, 1e308, "@INF@", None,
          True, "x", {"float": "nan"}, {"float": "-inf"}, {"list": [2**64]}, {"list": []},
          {"dict": [[0, 10**30]]}, {"tuple": [2**62, 3, 0]}]  # fmt: skip
SHAPES = [[2**62, 0], [0, 2**62], [2**61, 0], [0, 2**63 - 1], [2**64], [2**40, 2**40],
          [2**32, 0], [0], [0, 0], [1, 2**62], [3, 2**61]]  # fmt: skip


def varint(v):
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def damage(payload):
    b = bytearray(payload)
    op = rng.randrange(6)
    at = rng.randrange(max(1, len(b)))
    if op == 0 and b:
        b[at] ^= 1 << rng.randrange(8)
    elif op == 1 and b:
        b[at] = rng.choice([0, 0x7F, 0x80, 0xFF, rng.randrange(256)])
    elif op == 2:
        b[at : at + rng.randrange(1, 10)] = varint(rng.choice(EXTREMES))
    elif op == 3:
        del b[at : at + rng.randrange(1, 16)]
    elif op == 4:
        b[at:at] = b[at : at + rng.randrange(1, 16)]
    else:
        del b[at:]
    return bytes(b)


def damage_meta(body):
    text = body.decode()
    numbers = [m.span() for m in re.finditer(r"-?\d+(\.\d+)?", text)]
    if not numbers:
        return body
    a, z = rng.choice(numbers)
    value = rng.choice(EXTREMES + [-1, 10**30, -(2**63), "1e308", "0.5"])
    return (text[:a] + str(value) + text[z:]).encode()


def absurd_meta(sections):
    # One parameter, fitted scalar or array shape of the META section set to an absurd value.
    meta = json.loads(sections[0][1])
    what = rng.choice(["params", "fitted", "shape"])
    if what == "shape" and meta["arrays"]:
        k = rng.randrange(len(meta["arrays"]))
        meta["arrays"][k]["shape"] = shape = rng.choice(SHAPES)
        if 0 in shape:
            sections[1 + k] = (b"ARRY", b"")
    else:
        table = meta["fitted"] if what == "fitted" and meta["fitted"] else meta["params"]
        table[rng.choice(sorted(table))] = rng.choice(ABSURD)
    sections[0] = (b"META", json.dumps(meta).replace('"@INF@"', "1e999").encode())
    return sections


def exercise(model):
    # A loaded model is used as a user would: every answer finite, or a typed refusal.
    if isinstance(model, (Forest, Booster)):
        if model.n_features > 64:
            return
        Xe = np.random.RandomState(1).rand(5, model.n_features)
        if isinstance(model, Forest):
            out = [model.predict(Xe), model.importances(False), model.tree_importances()]
        else:
            out = [model.raw_predict(Xe), model.feature_importances(), model.tree_importances()]
        Forest.from_bytes(model.to_bytes()) if isinstance(model, Forest) else None
    else:
        if model.n_features_in_ > 64:
            return
        Xe = np.random.RandomState(1).rand(5, model.n_features_in_)
        out = [model.predict(Xe), model.feature_importances_, persistence.dumps(model)]
        if hasattr(model, "predict_proba"):
            proba = model.predict_proba(Xe)
            for p in proba if isinstance(proba, list) else [proba]:
                assert ((p >= 0) & (p <= 1)).all() and np.allclose(p.sum(axis=1), 1), p
    for o in out:
        if isinstance(o, np.ndarray) and o.dtype.kind == "f":
            assert np.isfinite(o).all(), o


start, done, outcomes = time.time(), 0, {}
while done < cases and time.time() - start < seconds:
    base = bases[done % len(bases)]
    layer = rng.choice(["model", "file", "meta", "absurd"])
    print(done, type(base).__name__, layer, flush=True)
    if layer == "model":
        raw = base.booster_.to_bytes() if hasattr(base, "booster_") else base.forest_.to_bytes()
        data = seal(int.from_bytes(raw[4:6], "little"), damage(raw[20:]))
        data = raw[:4] + data[4:]
        load = Booster.from_bytes if hasattr(base, "booster_") else Forest.from_bytes
    elif layer == "absurd":
        data = seal_file(absurd_meta(file_sections(persistence.dumps(base))))
        load = persistence.loads
    else:
        sections = file_sections(persistence.dumps(base))
        k = 0 if layer == "meta" else rng.randrange(len(sections))
        tag, body = sections[k]
        sections[k] = (tag, damage_meta(body) if layer == "meta" else damage(body))
        data, load = seal_file(sections), persistence.loads
    try:
        model = load(data)
    except (ModelFormatError, MemoryError) as e:
        outcomes[type(e).__name__] = outcomes.get(type(e).__name__, 0) + 1
    else:
        try:
            exercise(model)
            outcomes["loaded"] = outcomes.get("loaded", 0) + 1
        except (MemoryError, ValueError) as e:  # typed refusals of a loaded model's use
            if type(e) is ValueError:  # numpy's or scikit-learn's, not a forestimp type
                raise
            outcomes["refused in use"] = outcomes.get("refused in use", 0) + 1
    done += 1
print("DONE", done, json.dumps(outcomes), flush=True)
"""


@pytest.mark.parametrize("seed", [0, 1])
def test_damaged_models_are_refused_or_sound(seed):
    done = run_fuzz_child(CHILD, [str(seed), str(CASES), str(SECONDS)], SECONDS)
    assert done >= 300, done  # enough cases ran to mean something

import numpy as np
import pytest

from perfport import builtin
from perfport.features import (
    FEATURE_NAMES,
    bitcode_of,
    class_counts,
    kernel_features,
    scenario_features,
)


def test_feature_vector_is_complete_and_named(cpu):
    f = scenario_features(builtin("gaussian"), {"radius": 4, "width": 1024, "height": 256}, cpu)
    values = f.as_dict()
    assert list(values) == list(FEATURE_NAMES) and np.all(np.isfinite(f.as_array()))
    assert values["kernel_north"] == values["kernel_west"] == 4.0  # borders follow the radius
    assert values["data_width"] == 1024 and values["data_log2_cells"] == 18
    densities = [v for k, v in values.items() if k.startswith("kernel_density_")]
    assert sum(densities) == pytest.approx(1.0)
    assert values["device_compute_units"] == cpu.compute_units


def test_instruction_classes_see_the_code():
    simple = kernel_features(builtin("synthetic"), {"dtype": "float"})
    complex_ = kernel_features(builtin("synthetic"), {"dtype": "float", "complex": True})
    assert complex_["kernel_density_float_arith"] > simple["kernel_density_float_arith"]
    integral = kernel_features(builtin("synthetic"), {"dtype": "int", "complex": True})
    assert integral["kernel_density_float_arith"] < complex_["kernel_density_float_arith"]
    assert kernel_features(builtin("threshold"), {})["kernel_north"] == 0.0


def test_bitcode_extraction_rejects_other_bytes():
    with pytest.raises(ValueError, match="not a PoCL program binary"):
        bitcode_of(b"\x7fELF....")
    with pytest.raises(ValueError, match="truncated"):
        bitcode_of(
            b"poclbin\0" + b"x" * 10 + b"/program.bc" + (100).to_bytes(4, "little") + b"BC\xc0\xde"
        )


def test_class_counts_fold_unknown_opcodes():
    counts = class_counts({"fadd": 2, "load": 3, "freeze": 1})
    assert counts["float_arith"] == 2 and counts["memory"] == 3 and counts["other"] == 1

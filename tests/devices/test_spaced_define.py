"""A compile-time value with a space (ETYPE = "unsigned int") builds on OpenCL as on CUDA.
OpenCL's build options are one string split at spaces, so it was a compile error
(INVALID_BUILD_OPTIONS on PoCL, "Don't understand command line argument int" on NVIDIA)."""

from perfport import load_kernel, tune


def test_a_value_with_a_space_compiles(tmp_path, db):
    spec_file = tmp_path / "deftype.toml"
    spec_file.write_text(_SPEC)
    result = tune(load_kernel(spec_file), strategy="brute_force", db=db)
    assert result.outcomes.get("ok") == 2, result.measurements


_SPEC = '''
name = "spaced_define"
entry = "k"
language = "portable"
source = """
KERNEL void k(GLOBAL float* y, int n) {
    const int i = GID(0);
    ETYPE v = (ETYPE)3;
    if (i < n) y[i] = (float)v;
}
"""
global_size = ["n"]
local_size = ["64"]
default = { ETYPE = "float" }

[problem]
n = 1024

[[params]]
name = "ETYPE"
values = ["float", "unsigned int"]

[[args]]
kind = "array"
name = "y"
dtype = "float"
shape = ["n"]
output = true

[[args]]
kind = "scalar"
name = "n"
dtype = "int"
value = "n"
'''

import pickle

import pytest

from perfport._core import ArrayArg, KernelSpec, Param, ParamKind, SpecError


def _spec(**overrides):
    fields = dict(
        name="k",
        source="__kernel void k(__global float* a) {}",
        entry="k",
        params=(Param("wg", (1, 2, 4), ParamKind.LAUNCH), Param("UNROLL", (1, 2))),
        global_size=("round_up(n, wg)",),
        local_size=("wg",),
        args=(ArrayArg("a", "float", ("n",), output=True),),
        problem={"n": 16},
        default={"wg": 2, "UNROLL": 1},
    )
    fields.update(overrides)
    return KernelSpec(**fields)


def test_valid_spec_derives_defines_and_geometry():
    s = _spec()
    env = s.env({"wg": 4, "UNROLL": 2}, {"n": 10})
    assert s.build_defines(env) == {"UNROLL": "2"}  # launch parameters are not compiled in
    g = s.geometry(env)
    assert g.global_size == (12,) and g.local_size == (4,)
    assert pickle.loads(pickle.dumps(s)) == s


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"entry": "1bad"}, "entry point"),
        ({"source": " "}, "source"),
        # a name is printed in every table: an escape sequence drove the terminal
        ({"name": "k\x1b[31mRED"}, "1-200 printable characters"),
        ({"name": "k" * 201}, "1-200 printable characters"),
        ({"global_size": ("n", "n"), "local_size": ("wg",)}, "dimensions"),
        ({"global_size": ("m",)}, "unknown name"),
        ({"default": {"wg": 3, "UNROLL": 1}}, "not one of"),
        ({"default": {"wg": 2}}, "exactly the parameters"),
        # a declared launch parameter was called an unknown name
        ({"defines": {"X": "wg"}}, "launch-time parameter.s. wg, which a define cannot use; "),
        ({"defines": {"X": "wg"}}, "make wg compile-time .* or drop the define$"),
        ({"derived": {"hw": "wg // 2"}, "defines": {"X": "hw"}}, "hw, derived from launch-time"),
        ({"params": (Param("wg", (1,)), Param("wg", (2,)))}, "repeat"),
        ({"language": "fortran"}, "language"),
        ({"problem": {"wg": 1, "n": 4}}, "both parameters and problem"),
        ({"defines": {"UNROLL": "n"}}, "defined twice"),
        # -D a=1 rewrote the argument a: every configuration failed to compile
        (
            {"params": (Param("wg", (1, 2)), Param("a", (1, 2))), "default": {"wg": 1, "a": 1}},
            "macro 'a' would rename the argument a",
        ),
        # arrays are allocated once per problem: a shape of a parameter failed in the worker
        ({"args": (ArrayArg("a", "float", ("n // UNROLL",), output=True),)}, "once per problem"),
        ({"args": (ArrayArg("a", "UNROLL", ("n",), output=True),)}, "per problem"),
        # both were raw TypeErrors ('NoneType' object is not iterable)
        ({"args": None}, r"^kernel k: args must be a list, \(\) for none, not None$"),
        ({"params": None}, r"^kernel k: params must be a list, \(\) for none, not None$"),
        # a nested list read as the text "['wg > 2']", a non-empty list: always true
        ({"restrictions": [["wg > 2"]]}, r"^kernel k: restrictions: restriction \['wg > 2'\] is"),
        ({"restrictions": [None]}, "restriction None is a NoneType: give each as an expression"),
        ({"restrictions": {"wg": "wg > 2"}}, "restrictions must be a list of expressions, not a"),
        ({"restrictions": None}, r"^kernel k: restrictions must be a list, \(\) for none, not"),
        # dtype 'float' read the launch parameter float: "unknown element type 2"
        (
            {
                "params": (
                    Param("wg", (1, 2), ParamKind.LAUNCH),
                    Param("float", (1, 2), ParamKind.LAUNCH),
                ),
                "default": None,
            },
            "parameter 'float' has the name of an element type, which types such as dtype 'float'",
        ),
        ({"problem": {"n": 16, "int": 4}}, "problem value 'int' has the name of an element type"),
    ],
)
def test_invalid_specs_are_one_line_errors(overrides, message):
    with pytest.raises(SpecError, match=message) as info:
        _spec(**overrides)
    assert "\n" not in str(info.value)
    if "unknown name" not in message:  # a name the spec declares is named as what it is
        assert "unknown" not in str(info.value)


def test_a_parameter_named_like_an_argument_needs_another_macro():
    """Its macro, not its name, reaches the source: a define keeps it off the argument, and a
    launch parameter is no macro at all."""
    renamed = (Param("wg", (1, 2), ParamKind.LAUNCH), Param("a", (1, 2), define="A_TILE"))
    assert _spec(params=renamed, default={"wg": 1, "a": 1}).params[1].macro == "A_TILE"
    launch = (Param("a", (1, 2), ParamKind.LAUNCH),)
    assert _spec(params=launch, default={"a": 1}, local_size=("a",), global_size=("n",))


def test_param_values_checked():
    with pytest.raises(SpecError, match="at least one"):
        Param("x", ())
    with pytest.raises(SpecError, match="repeat"):
        Param("x", (1, 1))
    with pytest.raises(SpecError, match="list"):
        Param("x", "abc")
    # stored, a NaN or infinity made the whole results database unreadable
    with pytest.raises(SpecError, match="value inf must be a finite number"):
        Param("x", (1, float("inf")))
    with pytest.raises(SpecError, match="problem a: value nan must be a finite number"):
        _spec(problem={"n": 16, "a": float("nan")})
    with pytest.raises(SpecError, match="launch parameter has no define"):
        Param("x", (1,), ParamKind.LAUNCH, define="X")
    with pytest.raises(SpecError, match="identifier"):
        Param("x", (1,), define="1X")
    assert Param("read_only", (0, 1), define="READ_ONLY").macro == "READ_ONLY"
    with pytest.raises(SpecError, match="read-only"):
        ArrayArg("a", "float", ("n",), output=True, constant=True)

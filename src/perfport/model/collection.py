"""The measurement-kernel collection (the paper's UIPiCK, section 7.1): generators carrying
generator tags and variant arguments, filtered by the user's tags.

A filter tag without a colon is a *generator tag* (``flops``, ``matmul_sq``): it selects which
generators run, by one of the four match conditions of section 7.1 (``MatchCondition``). A
tag ``arg:v1,v2`` is a *variant tag*: it narrows the values a generator's argument may take to
those listed. Each generator yields one kernel per element of the Cartesian product of its
arguments' remaining values.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from perfport._core.records import Problem, Value
from perfport.model.errors import ModelError

# Every generated kernel's name starts with this, so none can take the name of an OpenCL C or
# CUDA built-in (NVIDIA's OpenCL refused a kernel named ``barrier``; PoCL had let it pass).
KERNEL_PREFIX = "perfport_mk_"


class MatchCondition(Enum):
    """When a generator's tag set G matches the user's generator tags U (section 7.1)."""

    IDENTICAL = "identical"  # (1) G == U
    SUBSET = "subset"  # (2) G is a subset of U
    SUPERSET = "superset"  # (3) G is a superset of U: the paper's default
    INTERSECT = "intersect"  # (4) G and U share at least one tag

    def holds(self, generator_tags: frozenset[str], user_tags: frozenset[str]) -> bool:
        if self is MatchCondition.IDENTICAL:
            return generator_tags == user_tags
        if self is MatchCondition.SUBSET:
            return generator_tags <= user_tags
        if self is MatchCondition.SUPERSET:
            return generator_tags >= user_tags
        return bool(generator_tags & user_tags)


@dataclass(frozen=True)
class VariantArg:
    """One argument of a generator and the values it may take. ``open`` arguments (problem
    sizes) also accept positive integers the generator does not list."""

    name: str
    values: tuple[Value, ...]
    open: bool = False

    def narrowed(self, texts: Sequence[str], generator: str) -> tuple[Value, ...]:
        chosen = tuple(self._parse(t, generator) for t in texts)
        if not self.open:
            bad = [v for v in chosen if v not in self.values]
            if bad:
                allowed = ",".join(str(v) for v in self.values)
                raise ModelError(
                    f"generator {generator}: {self.name}:{bad[0]} is not allowed; give values "
                    f"from {self.name}:{allowed}"
                )
        return tuple(dict.fromkeys(chosen))

    def _parse(self, text: str, generator: str) -> Value:
        sample = self.values[0]
        try:
            if isinstance(sample, bool):
                if text not in ("True", "False", "true", "false"):
                    raise ValueError(text)
                return text in ("True", "true")
            if isinstance(sample, int):
                value = int(text)
                if self.open and value < 1:
                    raise ValueError(text)
                return value
            if isinstance(sample, float):
                return float(text)
        except ValueError:
            raise ModelError(
                f"generator {generator}: {self.name}:{text} is not a valid "
                f"{type(sample).__name__}{' >= 1' if self.open else ''}; give one"
            ) from None
        return text


@dataclass(frozen=True)
class MeasurementKernel:
    """One generated measurement kernel: its generator, its argument values, the loopy
    program, and the program's size parameters (the arguments that are loopy sizes)."""

    generator: str
    args: Problem
    program: Any
    sizes: Mapping[str, int]

    @property
    def name(self) -> str:
        return f"mk-{self.generator}"

    @property
    def label(self) -> str:
        return f"{self.generator}[{self.args}]"


@dataclass(frozen=True)
class Generator:
    """A kernel generator: ``make(**structural args)`` returns a loopy program whose size
    parameters are the arguments named in ``size_args`` (re-evaluated, never re-counted)."""

    name: str
    tags: frozenset[str]
    args: tuple[VariantArg, ...]
    make: Callable[..., Any]
    size_args: frozenset[str] = field(default_factory=frozenset)
    doc: str = ""

    def arg(self, name: str) -> VariantArg | None:
        return next((a for a in self.args if a.name == name), None)

    def variants(self, narrowed: Mapping[str, Sequence[str]]) -> Iterator[Problem]:
        """Every argument assignment of the Cartesian product, after narrowing."""
        sets = []
        for a in self.args:
            texts = narrowed.get(a.name)
            sets.append(a.narrowed(texts, self.name) if texts else a.values)
        for combo in itertools.product(*sets):
            yield Problem.of(dict(zip((a.name for a in self.args), combo, strict=True)))

    def kernel(self, args: Problem) -> MeasurementKernel:
        """The measurement kernel of one argument assignment (loopy runs here)."""
        structural = {k: v for k, v in args.items() if k not in self.size_args}
        sizes = {k: int(v) for k, v in args.items() if k in self.size_args}
        return MeasurementKernel(self.name, args, self.make(**structural), sizes)


@dataclass(frozen=True)
class FilterTags:
    """User tags split into generator tags and variant tags (``arg`` -> value texts)."""

    generator_tags: frozenset[str]
    variant_tags: Mapping[str, tuple[str, ...]]

    @staticmethod
    def parse(tags: Sequence[str]) -> FilterTags:
        gen: set[str] = set()
        variant: dict[str, tuple[str, ...]] = {}
        for tag in tags:
            name, colon, values = tag.partition(":")
            if not name or (colon and not values):
                raise ModelError(
                    f"filter tag {tag!r}: give a generator tag (flops) or arg:value[,value]"
                )
            if not colon:
                gen.add(name)
                continue
            texts = tuple(v.strip() for v in values.split(","))
            if any(not t for t in texts):
                raise ModelError(f"filter tag {tag!r} has an empty value; give arg:v1,v2")
            variant[name] = variant.get(name, ()) + texts
        return FilterTags(frozenset(gen), variant)


class KernelCollection:
    """A set of generators, filtered by tags into measurement kernels (UIPiCK's
    ``KernelCollection``)."""

    def __init__(
        self,
        generators: Sequence[Generator],
        match: MatchCondition = MatchCondition.SUPERSET,
    ) -> None:
        names = [g.name for g in generators]
        if len(set(names)) != len(names):
            raise ModelError("two generators share a name; give each its own")
        self.generators = tuple(generators)
        self.match = match

    def matching(self, tags: Sequence[str]) -> tuple[Generator, ...]:
        """The generators whose tags meet the match condition."""
        wanted = FilterTags.parse(tags).generator_tags
        return tuple(g for g in self.generators if self.match.holds(g.tags, wanted))

    def variants(self, tags: Sequence[str]) -> list[tuple[Generator, Problem]]:
        """(generator, arguments) of every kernel the tags select, without building any."""
        parsed = FilterTags.parse(tags)
        chosen = self.matching(tags)
        unused = [a for a in parsed.variant_tags if not any(g.arg(a) for g in chosen)]
        if unused:
            raise ModelError(
                f"variant tag {unused[0]}: no matching generator has that argument; drop it "
                "or add a generator tag"
            )
        out = []
        for g in chosen:
            narrowed = {k: v for k, v in parsed.variant_tags.items() if g.arg(k)}
            out += [(g, args) for args in g.variants(narrowed)]
        return out

    def generate_kernels(self, tags: Sequence[str]) -> list[MeasurementKernel]:
        return [g.kernel(args) for g, args in self.variants(tags)]

    def generator(self, name: str) -> Generator:
        for g in self.generators:
            if g.name == name:
                return g
        raise ModelError(
            f"no generator {name!r}; known: {', '.join(g.name for g in self.generators)}"
        )

"""A search strategy of your own, passed to perfport.tune as a class (docs/search.md, "Your
own strategy"): it walks the work-group sizes from the largest down and stops after the first
one slower than its best.

    python examples/own_strategy.py
"""

import perfport
from perfport.strategies import Strategy


class LargestFirst(Strategy):
    name = "largest_first"  # keys its campaigns: a rerun resumes them
    summary = "work-group sizes from the largest down, until one is slower than the best"

    def __init__(self, space, seed=0):
        super().__init__(space, seed)
        sizes = [space.config(i)["wg"] for i in range(len(space))]
        self.order = sorted(range(len(space)), key=lambda i: -sizes[i])
        self.last = None

    def ask(self):
        # told holds every result, the asked and the others (the default, earlier sessions)
        last = self.told.get(self.last) if self.last is not None else None
        if last is not None and last > min(t for t in self.told.values() if t is not None):
            return None  # slower than the best so far: done
        self.last = next((i for i in self.order if i not in self.told), None)
        return self.last


result = perfport.tune("vector_add", problem={"n": 1 << 16}, strategy=LargestFirst,
                       db="own-strategy.db")  # fmt: skip
print(f"strategy {result.strategy}: {result.measured} measured, best {dict(result.best.config)}")

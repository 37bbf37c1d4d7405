"""Building a graph in Python stays linear in its node count (issue 27): a chain of 20,000
pointwise adds may take at most 25 times as long as one of 2,000 (linear: 10; quadratic:
100), each the best of two runs. The chain and its timing are bench/bench_python_graph_build.py's."""
import sys
from pathlib import Path

import cudnnfe

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from bench_python_graph_build import chain  # noqa: E402


def _best_seconds(n, named, runs=2):
    return min(sum(chain(n, named)) for _ in range(runs))


def test_adding_validating_and_building_nodes_is_linear():
    for named in (False, True):
        small, large = _best_seconds(2000, named), _best_seconds(20000, named)
        assert large < 25 * small, (
            f"20,000 nodes took {large:.2f} s, 2,000 took {small:.2f} s (names "
            f"{'given' if named else 'default'}): {large / small:.0f}x for 10x the nodes")


def test_default_names_still_count_from_the_smallest_free_index():
    g = cudnnfe.pygraph(io_data_type=cudnnfe.data_type.FLOAT,
                        target=cudnnfe.target.CPU_REFERENCE)
    x = g.tensor(name="x", dim=[1, 1, 4], stride=[4, 4, 1])
    g.add(x, x, name="add_1")
    names = [g.add(x, x).get_name() for _ in range(3)]
    # cudnn-frontend's default names: the smallest "add_<i>" no node has yet.
    assert names == ["add_0::OUT_0", "add_2::OUT_0", "add_3::OUT_0"], names

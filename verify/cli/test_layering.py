"""The layering check (verify/check_layering.py): negative controls on synthetic trees, then
this checkout against the graph its build wrote.

Each synthetic case writes a small src/, verify/ and fuzz/ and a components.json into a
temporary folder, breaks one thing (an upward include, an include of an unlinked sibling, a
test or a shared test header that reaches past what its target links, a cycle in the declared
graph, a folder of src/ that is not a component) and requires the checker to exit 1 naming the
file and line; the clean tree must pass. The real tree must pass against the build's
components.json, which must agree with CMakeLists.txt's vl_component() lines and the verify/
link rule; and an upward include planted in a copy of the real tree must be caught.
Run by ctest (cli_test_layering) with VL_SOURCE_DIR = the checkout and VL_COMPONENTS_JSON =
<build>/components.json; /usr/bin/python3.
"""
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SOURCE = Path(os.environ.get("VL_SOURCE_DIR") or Path(__file__).resolve().parents[2])
CHECKER = SOURCE / "verify" / "check_layering.py"
REAL_GRAPH = os.environ.get("VL_COMPONENTS_JSON")
SUMMARY = re.compile(r"^layering: (\d+) files, (\d+) includes, (\d+) violations$")

# A small project laid out like this one: core <- numeric <- kernels, engine (core, numeric),
# lessons (engine, kernels), the CLI (links vl = vl_lessons), two tests and a fuzz target that
# compiles one engine source itself.
GRAPH = {
    "components": {
        "core": {"folder": "src/core", "links": []},
        "numeric": {"folder": "src/numeric", "links": ["vl_core"]},
        "kernels": {"folder": "src/kernels", "links": ["vl_numeric"]},
        "engine": {"folder": "src/engine", "links": ["vl_core", "vl_numeric"]},
        "lessons": {"folder": "src/lessons", "links": ["vl_engine", "vl_kernels"]},
    },
    "libraries": {"vl": {"links": ["vl_lessons"]}},
    "targets": {
        "lessons": {"sources": ["src/cli/main.cpp"], "links": ["vl"]},
        "test_kernels_softmax": {"sources": ["verify/test_kernels_softmax.cpp"], "links": ["vl_kernels"]},
        "test_audit": {"sources": ["verify/test_audit.cpp"], "links": ["vl"]},
        "fuzz_spec": {"sources": ["fuzz/fuzz_spec.cpp", "src/engine/spec.cpp"], "links": []},
    },
}
FILES = {
    "src/core/errors.hpp": "#pragma once\nstruct UserError {};\n",
    "src/numeric/npy.hpp": '#pragma once\n#include "core/errors.hpp"\n#include <vector>\n',
    "src/numeric/npy.cpp": ('#include "numeric/npy.hpp"\n'
                            '// #include "lessons/catalog.hpp"   (a comment, not an include)\n'
                            '/* #include "engine/spec.hpp"\n   #include "kernels/reference/softmax.hpp" */\n'
                            "int npy;\n"),
    "src/kernels/reference/softmax.hpp": '#pragma once\n#include "numeric/npy.hpp"\n#include "core/errors.hpp"\n',
    "src/engine/spec.hpp": '#pragma once\n#include "core/errors.hpp"\n',
    "src/engine/spec.cpp": '#include "engine/spec.hpp"\n#include "numeric/npy.hpp"\n',
    "src/lessons/catalog.hpp": '#pragma once\n#include "engine/spec.hpp"\n#include "kernels/reference/softmax.hpp"\n',
    "src/cli/main.cpp": '#include "lessons/catalog.hpp"\n#include "options.hpp"\n#include "core/errors.hpp"\n',
    "src/cli/options.hpp": '#pragma once\n#include "engine/spec.hpp"\n',
    "verify/kernel_tests.hpp": '#pragma once\n#include "kernels/reference/softmax.hpp"\n',
    "verify/test_kernels_softmax.cpp": '#include "kernel_tests.hpp"\n#include "numeric/npy.hpp"\n',
    "verify/test_audit.cpp": '#include "lessons/catalog.hpp"\n#include "kernel_tests.hpp"\n',
    "fuzz/fuzz_spec.cpp": '#include "core/errors.hpp"\n#include "engine/spec.hpp"\n',
}


class Tree:
    """A synthetic checkout and its graph in a temporary folder."""

    def __init__(self, files=None, graph=None):
        self.tmp = tempfile.TemporaryDirectory(prefix="vl-layering-")
        self.root = Path(self.tmp.name)
        for rel, text in (files or FILES).items():
            path = self.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        self.graph = self.root / "components.json"
        self.graph.write_text(json.dumps(graph or GRAPH, indent=2))

    def check(self):
        return check(self.graph, self.root)

    def close(self):
        self.tmp.cleanup()


def check(graph, root):
    r = subprocess.run([sys.executable, str(CHECKER), "--graph", str(graph), "--root", str(root)],
                       capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout.splitlines(), r.stderr


def with_lines(files, rel, *lines):
    """FILES with lines appended to one file; returns (files, number of the first new line)."""
    files = dict(files)
    old = files.get(rel, "")
    files[rel] = old + "".join(line + "\n" for line in lines)
    return files, old.count("\n") + 1


class Synthetic(unittest.TestCase):
    def run_tree(self, files=None, graph=None):
        tree = Tree(files, graph)
        self.addCleanup(tree.close)
        return tree.check()

    def assert_violations(self, files, expected, graph=None):
        rc, lines, err = self.run_tree(files, graph)
        self.assertEqual(rc, 1, "\n".join(lines) + err)
        m = SUMMARY.match(lines[-1])
        self.assertTrue(m, lines[-1])
        self.assertEqual(lines[:-1], expected)
        self.assertEqual(int(m.group(3)), len(expected))

    def test_clean_tree_passes(self):
        rc, lines, err = self.run_tree()
        self.assertEqual(rc, 0, "\n".join(lines) + err)
        # Every file is checked (kernel_tests.hpp and options.hpp through their includers);
        # the commented-out includes and <vector> are not counted.
        self.assertEqual(lines, ["layering: 13 files, 17 includes, 0 violations"])

    def test_upward_include(self):
        files, line = with_lines(FILES, "src/numeric/npy.cpp", '#include "engine/spec.hpp"')
        self.assert_violations(files, [
            f'src/numeric/npy.cpp:{line}: src/numeric includes "engine/spec.hpp" but vl_numeric '
            "does not link vl_engine (declared: vl_core)"])

    def test_upward_include_in_angle_brackets(self):
        files, line = with_lines(FILES, "src/core/errors.hpp", "#include <numeric/npy.hpp>",
                                 "#include <numeric/not_ours.hpp>", "#include <numeric>")
        self.assert_violations(files, [
            f'src/core/errors.hpp:{line}: src/core includes "numeric/npy.hpp" but vl_core '
            "does not link vl_numeric (declared: none)"])

    def test_comments_and_literals(self):
        # "/*" inside a string opens no comment; an include inside a raw string is not one.
        files, line = with_lines(FILES, "src/numeric/npy.cpp", 'const char* glob = "specs/*.md";',
                                 'const char* spec = R"x(', '#include "lessons/catalog.hpp"', ')x";',
                                 '#include "engine/spec.hpp"  /* an upward include */')
        self.assert_violations(files, [
            f'src/numeric/npy.cpp:{line + 4}: src/numeric includes "engine/spec.hpp" but vl_numeric '
            "does not link vl_engine (declared: vl_core)"])

    def test_unlinked_sibling(self):
        # engine and kernels both sit on numeric; engine does not link kernels.
        files, line = with_lines(FILES, "src/engine/spec.cpp", '#include "kernels/reference/softmax.hpp"')
        self.assert_violations(files, [
            f'src/engine/spec.cpp:{line}: src/engine includes "kernels/reference/softmax.hpp" but vl_engine '
            "does not link vl_kernels (declared: vl_core, vl_numeric)"])

    def test_component_test_reaching_past_its_component(self):
        files, line = with_lines(FILES, "verify/test_kernels_softmax.cpp", '#include "engine/spec.hpp"')
        self.assert_violations(files, [
            f'verify/test_kernels_softmax.cpp:{line}: test_kernels_softmax includes "engine/spec.hpp" '
            "but test_kernels_softmax does not link vl_engine (declared: vl_kernels)"])

    def test_shared_test_header_checked_for_each_includer(self):
        # test_audit (links vl) may include lessons/; test_kernels_softmax includes this header too.
        files, line = with_lines(FILES, "verify/kernel_tests.hpp", '#include "lessons/catalog.hpp"')
        self.assert_violations(files, [
            f'verify/kernel_tests.hpp:{line}: test_kernels_softmax includes "lessons/catalog.hpp" '
            "but test_kernels_softmax does not link vl_lessons (declared: vl_kernels)"])

    def test_fuzz_target_reaches_what_its_sources_link(self):
        files, line = with_lines(FILES, "fuzz/fuzz_spec.cpp", '#include "numeric/npy.hpp"',
                                 '#include "kernels/reference/softmax.hpp"')
        self.assert_violations(files, [
            f'fuzz/fuzz_spec.cpp:{line + 1}: fuzz_spec includes "kernels/reference/softmax.hpp" '
            "but fuzz_spec does not link vl_kernels (declared: compiles src/engine)"])

    def test_cli_folder_is_not_a_library(self):
        files, line = with_lines(FILES, "src/lessons/catalog.hpp", '#include "cli/options.hpp"')
        self.assert_violations(files, [
            f'src/lessons/catalog.hpp:{line}: src/lessons includes "cli/options.hpp" but src/cli '
            "is not a component: nothing links it (declared: vl_engine, vl_kernels)"])

    def test_cycle_in_declared_graph(self):
        graph = copy.deepcopy(GRAPH)
        graph["components"]["numeric"]["links"].append("vl_kernels")
        tree = Tree(graph=graph)
        self.addCleanup(tree.close)
        rc, lines, err = tree.check()
        self.assertEqual(rc, 1, "\n".join(lines) + err)
        self.assertEqual(lines, [
            f"{tree.graph}: cycle in the declared component graph: vl_kernels -> vl_numeric -> vl_kernels",
            "layering: 13 files, 17 includes, 1 violations"])

    def test_cycle_through_the_vl_library(self):
        graph = copy.deepcopy(GRAPH)
        graph["components"]["engine"]["links"].append("vl")
        tree = Tree(graph=graph)
        self.addCleanup(tree.close)
        rc, lines, _ = tree.check()
        self.assertEqual(rc, 1)
        self.assertIn(f"{tree.graph}: cycle in the declared component graph: vl -> vl_lessons -> vl_engine -> vl",
                      lines)

    def test_folder_that_is_not_a_component(self):
        files = dict(FILES, **{"src/backends/registry.hpp": '#include "kernels/reference/softmax.hpp"\n'})
        self.assert_violations(files, [
            "src/backends: folder of src/ is not a declared component "
            "(no vl_component(backends ...) in CMakeLists.txt) and no target builds from it"])

    def test_file_of_an_unconfigured_target_is_noted_not_checked(self):
        files = dict(FILES, **{"bench/kernel_bench.cpp": '#include "lessons/catalog.hpp"\n'})
        rc, lines, err = self.run_tree(files)
        self.assertEqual(rc, 0, "\n".join(lines) + err)
        self.assertEqual(lines, [
            "layering: 1 files not built in this configuration, not checked: bench/kernel_bench.cpp",
            "layering: 13 files, 17 includes, 0 violations"])


def vl_component_lines():
    """{component: [vl_* links]} as CMakeLists.txt declares them."""
    text = (SOURCE / "CMakeLists.txt").read_text()
    text = "\n".join(line.split("#")[0] for line in text.splitlines())
    out = {}
    for m in re.finditer(r"^\s*vl_component\(\s*(\w+)([^)]*)\)", text, re.M):
        out[m.group(1)] = [a for a in m.group(2).split() if re.match(r"vl(_|$)", a)]
    return out


@unittest.skipUnless(REAL_GRAPH, "set VL_COMPONENTS_JSON to <build>/components.json (ctest does)")
class RealTree(unittest.TestCase):
    def setUp(self):
        self.graph = json.loads(Path(REAL_GRAPH).read_text())

    def test_graph_is_the_cmake_declarations(self):
        declared = vl_component_lines()
        self.assertTrue(declared)
        self.assertEqual({c: v["links"] for c, v in self.graph["components"].items()}, declared)
        self.assertEqual(self.graph["libraries"]["vl"]["links"], ["vl_lessons", "vl_onnx"])
        cli = self.graph["targets"]["lessons"]
        self.assertEqual(cli["links"], ["vl"])
        self.assertTrue(cli["sources"])
        self.assertTrue(all(s.startswith("src/cli/") for s in cli["sources"]), cli["sources"])
        # verify/test_<group>_*.cpp are the sources of the program verify_<group>, which links only
        # vl_<group> when the group is a component, else vl (the build re-globs verify/ before ctest).
        tests = sorted((SOURCE / "verify").glob("test_*.cpp"))
        self.assertTrue(tests)
        groups = {}
        for path in tests:
            groups.setdefault(re.match(r"test_([a-z]+)_", path.stem).group(1), []).append(f"verify/{path.name}")
        for group, files in groups.items():
            target = self.graph["targets"].get(f"verify_{group}")
            self.assertIsNotNone(target, f"no program verify_{group} for {files}")
            want = [f"vl_{group}"] if group in declared else ["vl"]
            self.assertEqual(target["links"], want, group)
            self.assertEqual(sorted(s for s in target["sources"] if s.startswith("verify/")), files, group)

    def test_real_tree_passes(self):
        rc, lines, err = check(REAL_GRAPH, SOURCE)
        self.assertEqual(rc, 0, "\n".join(lines) + err)
        m = SUMMARY.match(lines[-1])
        self.assertTrue(m, lines)
        self.assertGreater(int(m.group(1)), 50)
        self.assertGreater(int(m.group(2)), 100)

    def test_upward_include_planted_in_a_copy_is_caught(self):
        components = self.graph["components"]
        with tempfile.TemporaryDirectory(prefix="vl-layering-real-") as tmp:
            for top in ("src", "verify", "bench", "fuzz"):
                if (SOURCE / top).is_dir():
                    shutil.copytree(SOURCE / top, Path(tmp) / top,
                                    ignore=shutil.ignore_patterns("*.npy", "*.pb", "*.onnx", "__pycache__"))
            # The lowest component (it links nothing) includes the top one (nothing links it).
            bottom = next(c for c, v in components.items() if not v["links"])
            linked = {l for v in components.values() for l in v["links"]}
            top = next(c for c in reversed(list(components)) if f"vl_{c}" not in linked)
            victim = sorted((Path(tmp) / "src" / bottom).glob("*.hpp"))[0]
            text = victim.read_text()
            line = text.count("\n") + (0 if text.endswith("\n") else 1) + 1
            victim.write_text(text + ("" if text.endswith("\n") else "\n") + f'#include "{top}/planted.hpp"\n')
            rc, lines, err = check(REAL_GRAPH, tmp)
        self.assertEqual(rc, 1, "\n".join(lines) + err)
        self.assertIn(f'src/{bottom}/{victim.name}:{line}: src/{bottom} includes "{top}/planted.hpp" '
                      f"but vl_{bottom} does not link vl_{top} (declared: none)", lines)


if __name__ == "__main__":
    unittest.main(verbosity=2)

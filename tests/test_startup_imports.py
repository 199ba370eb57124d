"""What a `kb search` process loads before it asks anything, and the collector main() pauses for the imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# modules the search command's path must not import: charts, the progress bars, the config and extraction
# models, the jar fetcher's HTTP and XML stack, the token counter (hybrid search counts nothing), date phrases
# (read by the first question read, not on load)
NOT_FOR_SEARCH = (
    "matplotlib",
    "rich",
    "pydantic",
    "yaml",
    "dateparser",
    "tiktoken",
    "kb.jars",
    "urllib.request",
    "http.client",
    "xml.etree",
)


def loaded(code: str) -> dict[str, object]:
    """Run `code` in a fresh interpreter; it leaves a JSON object as the last line of stdout."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    result: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return result


def test_the_search_command_loads_nothing_it_does_not_use() -> None:
    code = (
        "import json, sys\nfrom kb.cli import load_command\nload_command('search')\n"
        "print(json.dumps({'modules': sorted(sys.modules)}))"
    )
    modules = loaded(code)["modules"]
    assert isinstance(modules, list)
    heavy = sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in NOT_FOR_SEARCH))
    assert heavy == []
    assert "neo4j" in modules and "kb.embed" in modules  # what it does use (the check above reads real imports)


def test_main_turns_the_collector_back_on_once_the_command_is_loaded() -> None:
    """main() pauses the collector while a command's modules are imported and freezes what they made (it lives
    to the end); the command itself runs with the collector on: a long `kb refresh` or `kb mcp` needs it."""
    code = (
        "import gc, json, sys\nsys.argv = ['kb', 'skills', 'install', '--help']\nfrom kb.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps({'enabled': gc.isenabled(), 'frozen': gc.get_freeze_count()}))"
    )
    seen = loaded(code)
    assert seen["enabled"] is True
    assert isinstance(seen["frozen"], int) and seen["frozen"] > 10_000


def ended(args: list[str]) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of `kb ARGS` run through main(), with a line printed after main() returns."""
    code = f"import sys\nsys.argv = ['kb', *{args!r}]\nfrom kb.cli import main\n"
    code += "try:\n    main()\nfinally:\n    print('AFTER')\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def test_a_search_ends_as_soon_as_its_output_is_out() -> None:
    """`kb search` skips the interpreter's teardown: nothing runs after main(), yet the output and the exit
    code are whole, for a success and for an error; other commands return from main() as usual."""
    code, out, _ = ended(["search", "--help"])
    assert code == 0 and "Usage: kb search" in out and out.rstrip().endswith(("show this message and exit.", "exit."))
    assert "AFTER" not in out
    code, out, err = ended(["search", "x", "--k", "0"])  # refused while parsing: no graph is needed
    assert code == 2 and "Invalid value for '--k'" in err and "AFTER" not in out
    code, out, _ = ended(["skills", "install", "--help"])
    assert code == 0 and out.rstrip().endswith("AFTER")


def blas_threads_seen(args: list[str], preset: str | None) -> str:
    """OPENBLAS_NUM_THREADS as the command's modules (and numpy with them) start loading under main()."""
    code = (
        "import os, sys\nimport kb.cli as c\nreal = c.load_command\n"
        "def spy(name):\n    print('BLAS', os.environ.get('OPENBLAS_NUM_THREADS'), flush=True)\n    return real(name)\n"
        f"c.load_command = spy\nsys.argv = ['kb', *{args!r}]\nc.main()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if preset is not None:
        env["OPENBLAS_NUM_THREADS"] = preset
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    return proc.stdout.split("BLAS ", 1)[1].split()[0]


def test_a_search_starts_numpy_with_two_blas_threads_not_a_pool_per_core() -> None:
    assert blas_threads_seen(["search", "--help"], None) == "2"
    assert blas_threads_seen(["search", "--help"], "4") == "4"  # the user's own setting stays
    assert blas_threads_seen(["skills", "install", "--help"], None) == "None"

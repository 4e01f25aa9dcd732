"""The layers import one way (calibration <- vision <- tracking <- rules, cueref on top), the rules
never load OpenCV, not even through another module, and the simulator is a tool beside the product:
nothing on the referee's runtime path imports it (only the ``cueref simulate`` command does). The
command modules are a thin shell: only the CLI imports them (docs/architecture.md)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["calibration", "vision", "tracking", "rules", "cueref"]
# what each layer may NOT import
FORBIDDEN = {
    "calibration": {"vision", "tracking", "rules", "cueref"},
    "vision": {"tracking", "rules", "cueref"},
    "tracking": {"rules", "cueref"},
    "rules": {"cueref", "vision", "cv2", "simulator"},
}
# the product's layers never import the simulator; in cueref/ only this command may
FORBIDDEN = {layer: roots | {"simulator"} for layer, roots in FORBIDDEN.items()}
SIMULATOR_USERS = {"cueref/commands/simulate.py"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return modules


def imported_roots(path: Path) -> set[str]:
    return {m.split(".")[0] for m in imported_modules(path)}


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_imports_flow_one_way(layer):
    bad = []
    for path in sorted((ROOT / layer).rglob("*.py")):
        wrong = imported_roots(path) & FORBIDDEN[layer]
        if wrong:
            bad.append(f"{path.relative_to(ROOT)} imports {', '.join(sorted(wrong))}")
    assert not bad, "imports against the pipeline's direction:\n" + "\n".join(bad)


def test_only_the_simulate_command_imports_the_simulator():
    bad = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "cueref").rglob("*.py"))
        if "simulator" in imported_roots(path) and str(path.relative_to(ROOT)) not in SIMULATOR_USERS
    ]
    assert not bad, "the simulator is imported on the product's path by: " + ", ".join(bad)


def test_only_the_cli_imports_the_command_modules():
    """Library code that commands share lives in cueref/ (errors, options, calls, compare, outputs,
    pipeline), never in a command that another imports."""
    product = [p for layer in [*LAYERS, "simulator"] for p in sorted((ROOT / layer).rglob("*.py"))]
    bad = [
        str(path.relative_to(ROOT))
        for path in product
        if any(m == "cueref.commands" or m.startswith("cueref.commands.") for m in imported_modules(path))
        and path != ROOT / "cueref" / "cli.py"
    ]
    assert not bad, "command modules imported outside the CLI by: " + ", ".join(bad)


def test_the_cli_names_its_commands_without_importing_them():
    """cueref/cli.py lists the command modules by name and imports only the one chosen."""
    assert not {m for m in imported_modules(ROOT / "cueref" / "cli.py") if m.startswith("cueref.commands")}
    code = "import sys; import cueref.cli; assert not [m for m in sys.modules if m.startswith('cueref.commands.')]"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_rules_never_load_opencv():
    """Importing every rules module (and the event types) leaves cv2 out of sys.modules."""
    modules = sorted(
        ".".join(p.relative_to(ROOT).with_suffix("").parts)
        for p in (ROOT / "rules").rglob("*.py")
        if p.name != "__init__.py"
    )
    code = (
        "import sys, importlib\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "import rules, tracking.events\n"
        "assert 'cv2' not in sys.modules, 'cv2 was imported by the rules'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_the_design_card_layout_exists():
    for name in ["pyproject.toml", "README.md", "calibration", "vision", "tracking", "rules", "sample_videos", "tests", "cueref",
                 "simulator"]:
        assert (ROOT / name).exists(), f"{name} is missing from the project root"

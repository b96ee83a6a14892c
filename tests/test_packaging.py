"""What a non-editable install (a wheel, the container image) ships: every data file the
code reads must be declared as package data, or the installed server lacks it."""

from __future__ import annotations

import fnmatch
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("domain", "projections", "server", "clients")


def _tracked() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", *PACKAGES], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"not a git checkout ({exc})")
    return [ROOT / line for line in out.splitlines() if line]


def _package_of(path: Path) -> Path:
    here = path.parent
    while not (here / "__init__.py").exists():
        here = here.parent
    return here


def test_every_data_file_of_the_packages_is_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared: dict[str, list[str]] = config["tool"]["setuptools"]["package-data"]
    missing = []
    for path in _tracked():
        if path.suffix in (".py", ".pyi") or path.name == "py.typed" or not path.exists():
            continue
        package = _package_of(path)
        name = ".".join(package.relative_to(ROOT).parts)
        inside = path.relative_to(package).as_posix()
        if not any(fnmatch.fnmatch(inside, pattern) for pattern in declared.get(name, [])):
            missing.append(f"{path.relative_to(ROOT)} (package {name}: {inside})")
    assert not missing, "not in [tool.setuptools.package-data]: " + ", ".join(missing)

"""Packages for setuptools: the folder `daemon/` is installed as the import package `jupcron`.

The name `daemon` collides with python-daemon (DESIGN §1), so the folders keep the
layout of the design card while the import names are the product's: `daemon/` is
`jupcron` and `migrations/` is `jupcron.migrations`. Everything else is in
pyproject.toml.
"""

from setuptools import find_namespace_packages, setup

FOLDERS = {"daemon": "jupcron", "migrations": "jupcron.migrations"}


def _packages() -> dict[str, str]:
    found = {}
    for folder, name in FOLDERS.items():
        # namespace discovery: the page's templates/ and static/ are data folders too
        for package in find_namespace_packages(
            include=[folder, f"{folder}.*"], exclude=["*.__pycache__"]
        ):
            found[name + package[len(folder) :]] = package.replace(".", "/")
    return found


PACKAGES = _packages()
setup(packages=sorted(PACKAGES), package_dir=PACKAGES)

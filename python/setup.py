"""setup.py - copies the checkout's libtensorc.so into the package as it is
built, so an installed tensorc needs neither the checkout nor
TENSORC_LIB.  The library is looked for at $TENSORC_LIB, then at
../build/package/lib/libtensorc.so (the README's setup builds it there).
Everything else is in pyproject.toml."""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))


def find_library():
    env = os.environ.get("TENSORC_LIB")
    if env:
        if not os.path.isfile(env):
            raise SystemExit(f"setup.py: TENSORC_LIB={env} is not a file")
        return env
    built = os.path.join(HERE, "..", "build", "package", "lib", "libtensorc.so")
    if os.path.isfile(built):
        return built
    raise SystemExit("setup.py: libtensorc.so not found: build the library first "
                     "(scripts/setup.sh, or cmake -S . -B build && cmake --build build -j2, "
                     "from the repository root), or set TENSORC_LIB to its path")


class BuildPy(build_py):
    def run(self):
        super().run()
        dest = os.path.join(self.build_lib, "tensorc", "libtensorc.so")
        shutil.copyfile(os.path.realpath(find_library()), dest)  # the file, not the symlink


class BinaryDistribution(Distribution):
    """The wheel carries a shared library: tag it for this platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildPy}, distclass=BinaryDistribution)

"""setuptools entry point: builds libcudnnfe.so with CMake and bundles it.

Project metadata is in pyproject.toml; the version is the header's (one version
for the library and every binding). ``build_py`` runs CMake on the
repository (``../..``, see ``_cudnnfe_build.py``) and copies the library into
the package as ``cudnnfe/lib/libcudnnfe.so.<ABI>``; ``_lib.py`` loads it from
there. The wheel is tagged ``py3-none-<platform>``: it holds a native library
but no Python extension, so one wheel serves every Python 3 version.
"""
import os
import shutil
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cudnnfe_build import abi_version, build_library, package_version, source_dir  # noqa: E402

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel


class BuildPyWithLibrary(build_py):
    """build_py that also builds and copies libcudnnfe.so."""

    def run(self):
        super().run()
        build_temp = Path(self.get_finalized_command("build").build_temp) / "cmake"
        library = build_library(build_temp, log=lambda msg: print(msg, flush=True))
        if os.environ.get("CUDNNFE_PREBUILT_LIBRARY"):
            # The soname _lib.py loads: libcudnnfe.so.<ABI>, also when the file
            # given is the fully versioned libcudnnfe.so.<ABI>.<MINOR>.<PATCH>.
            version = library.name.partition("libcudnnfe.so.")[2]
            name = "libcudnnfe.so." + (version.split(".")[0] if version else "0")
        else:
            name = f"libcudnnfe.so.{abi_version(source_dir())}"
        targets = [Path(self.build_lib) / "cudnnfe" / "lib"]
        if getattr(self, "editable_mode", False):
            targets.append(Path(__file__).resolve().parent / "cudnnfe" / "lib")
        for target in targets:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(library, target / name)
            print(f"cudnnfe: bundled {library} as {target / name}", flush=True)


class PlatformWheel(bdist_wheel):
    """Mark the wheel as platform-specific (it holds a .so) but Python-version independent."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


class BinaryDistribution(Distribution):
    """A distribution with a native library: its files go to platlib, not purelib
    (auditwheel refuses a shared library under purelib)."""

    def has_ext_modules(self):
        return True


setup(version=package_version(), distclass=BinaryDistribution,
      cmdclass={"build_py": BuildPyWithLibrary, "bdist_wheel": PlatformWheel})

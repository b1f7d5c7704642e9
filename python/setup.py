"""pip install --no-build-isolation ./python: builds the module with the repository's CMake
build (Debian's pybind11-dev, setuptools; no download) and installs the package `megamem`.

The build directory is $MEGAMEM_BUILD_DIR, else build/native-release when it is configured
(scripts/build.sh native-release; only the module is compiled then), else a fresh one under
setuptools' build_temp."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

REPOSITORY = Path(__file__).resolve().parent.parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_dir(self):
        given = os.environ.get("MEGAMEM_BUILD_DIR")
        if given:
            return Path(given).resolve()
        existing = REPOSITORY / "build" / "native-release"
        if (existing / "CMakeCache.txt").exists():
            return existing
        return Path(self.build_temp).resolve() / "cmake"

    def build_extension(self, ext):
        build = self.build_dir()
        if not (build / "CMakeCache.txt").exists():
            subprocess.check_call(["cmake", "-S", str(REPOSITORY), "-B", str(build), "-G", "Ninja",
                                   "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF",
                                   f"-DPython_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", str(build), "--target", "_megamem"])
        built = next((build / "python" / "megamem").glob("_megamem*.so"))
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(
    name="megamem",
    version="0.1.0",
    description="Per-GPU memory of Megatron-Core training: estimate, check, plan",
    packages=["megamem"],
    ext_modules=[CMakeExtension("megamem._megamem")],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
)

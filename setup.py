"""Build hook: the wheel gets each translation compiled (``maia/locale/<lang>/LC_MESSAGES/maia.mo``).

Everything else is declared in ``setup.cfg``. The catalogs are compiled by ``maia/i18n/po.py`` (pure Python,
loaded by path: nothing of MAIA is installed yet), so no ``msgfmt`` is needed.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _po_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_maia_po", HERE / "maia" / "i18n" / "po.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


class BuildWithCatalogs(build_py):
    """``build_py`` that also compiles every ``maia.po`` into the ``maia.mo`` beside it in the build."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the source tree, where MAIA compiles the catalog itself
        po = _po_module()
        for source in sorted((HERE / "maia" / "locale").glob("*/LC_MESSAGES/maia.po")):
            target = Path(self.build_lib) / source.relative_to(HERE).with_suffix(".mo")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(po.compile_mo(po.parse(source.read_text(encoding="utf-8"))))
            self.announce(f"compiled {source.relative_to(HERE)} -> {target}", level=2)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        """The built files, the compiled catalogs included (so installers record them)."""
        outputs = list(super().get_outputs(include_bytecode))
        for source in sorted((HERE / "maia" / "locale").glob("*/LC_MESSAGES/maia.po")):
            target = str(Path(self.build_lib) / source.relative_to(HERE).with_suffix(".mo"))
            if target not in outputs:
                outputs.append(target)
        return outputs


setup(cmdclass={"build_py": BuildWithCatalogs})

"""Every MINIDL_* environment variable, read in one place.

minidl reads its environment once, the first time `current()` is called, and
keeps the result: code that needs a setting asks this module instead of
`os.environ`, so each variable has one name, one default and one validation.
Tests that change a variable call `reload()` afterwards.

| variable               | setting           | default                      |
|------------------------|-------------------|------------------------------|
| MINIDL_BACKEND         | backend           | None (cpu, else numpy)       |
| MINIDL_HOME            | home              | ~/.minidl                    |
| MINIDL_DATA_DIR        | data_dir          | None                         |
| MINIDL_NUM_THREADS     | num_threads       | None (all cores)             |
| MINIDL_CPU_ISA         | cpu_isa           | None (the best cpuid allows) |
| MINIDL_AMX             | amx               | True (AMX kernels where the CPU has them) |
| MINIDL_OPENCL_DEVICE   | opencl_device     | None (first GPU, else first) |
| MINIDL_OPENCL_TUNE     | opencl_tune       | True                         |
| MINIDL_OPENCL_PROFILE  | opencl_profile    | None (from the device type)  |
| MINIDL_OPENCL_BUILD_OPTIONS | opencl_build_options | () (none added)       |

MINIDL_OPENCL_BUILD_OPTIONS holds extra OpenCL C compiler options, split like a shell
command line, appended to every program's own (e.g. "-cl-opt-disable" for Oclgrind, which
cannot run the `freeze` instruction of LLVM's optimized builds).
"""

import os
import shlex
from dataclasses import dataclass
from typing import Optional, Tuple

_FALSE_WORDS = ("0", "false", "no", "off")
CPU_ISAS = ("generic", "avx2", "avx512")
OPENCL_PROFILES = ("cpu", "gpu")


class SettingError(ValueError):
    """A MINIDL_* variable holds a value minidl cannot use; the message names the variable."""


@dataclass(frozen=True)
class Settings:
    backend: Optional[str]
    home: str
    data_dir: Optional[str]
    num_threads: Optional[int]
    cpu_isa: Optional[str]
    amx: bool
    opencl_device: Optional[str]
    opencl_tune: bool
    opencl_profile: Optional[str]
    opencl_build_options: Tuple[str, ...] = ()

    @property
    def cache_dir(self):
        """Where downloaded datasets are kept: MINIDL_HOME/datasets."""
        return os.path.join(self.home, "datasets")


def _text(environ, name):
    value = environ.get(name)
    if value is None:
        return None
    value = value.strip()
    return value or None


def _positive_int(environ, name):
    value = _text(environ, name)
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise SettingError(f"{name}={environ[name]!r}: expected a positive integer")
    return number


def _choice(environ, name, choices):
    value = _text(environ, name)
    if value is None:
        return None
    value = value.lower()
    if value not in choices:
        raise SettingError(f"{name}={environ[name]!r}: expected one of {', '.join(choices)}")
    return value


def _words(environ, name):
    value = _text(environ, name)
    if value is None:
        return ()
    try:
        return tuple(shlex.split(value))
    except ValueError as exc:  # an unclosed quote
        raise SettingError(f"{name}={environ[name]!r}: {exc}") from None


def _switch(environ, name):
    """An on/off variable, on unless set to one of _FALSE_WORDS."""
    value = _text(environ, name)
    return value is None or value.lower() not in _FALSE_WORDS


def read(environ=None):
    """Settings from `environ` (default os.environ), validated; raises SettingError."""
    environ = os.environ if environ is None else environ
    home = _text(environ, "MINIDL_HOME") or os.path.join(os.path.expanduser("~"), ".minidl")
    return Settings(
        backend=(_text(environ, "MINIDL_BACKEND") or "").lower() or None,
        home=home,
        data_dir=_text(environ, "MINIDL_DATA_DIR"),
        num_threads=_positive_int(environ, "MINIDL_NUM_THREADS"),
        cpu_isa=_choice(environ, "MINIDL_CPU_ISA", CPU_ISAS),
        amx=_switch(environ, "MINIDL_AMX"),
        opencl_device=_text(environ, "MINIDL_OPENCL_DEVICE"),
        opencl_tune=_switch(environ, "MINIDL_OPENCL_TUNE"),
        opencl_profile=_choice(environ, "MINIDL_OPENCL_PROFILE", OPENCL_PROFILES),
        opencl_build_options=_words(environ, "MINIDL_OPENCL_BUILD_OPTIONS"),
    )


_current = None


def current():
    """The settings of this process, read from the environment on first use."""
    global _current
    if _current is None:
        _current = read()
    return _current


def reload():
    """Read the environment again (for tests that change a MINIDL_* variable)."""
    global _current
    _current = None
    return current()

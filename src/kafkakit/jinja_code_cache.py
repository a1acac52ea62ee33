"""Compiled Jinja code shared by ansible-playbook's forked workers, through files.

Ansible forks a worker per host and task, and each worker compiles every template and condition
of its task anew (Jinja keeps no cache across processes): on a no-op site.yml about a quarter of
the workers' CPU. What Jinja compiles a source to is a Python code object that depends only on the
source, the environment's syntax settings and the Jinja, ansible-core and Python versions, so a
code object compiled once can be kept like Python's own __pycache__: marshalled into a file named
by a digest of all of those. A worker that finds the file loads the code instead of compiling.

`install()` patches ansible-core's AnsibleEnvironment (pinned in requirements.lock); a source
that does not compile is never kept, so its error is raised as before.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2

# The patched class and the settings that change what a source compiles to (ansible-core 2.19).
from ansible._internal._templating import _jinja_bits, _jinja_common
from ansible.release import __version__ as ansible_core_version
from jinja2 import nodes
from jinja2.environment import TemplateExpression

FORMAT = 1
_memo: dict[str, types.CodeType] = {}
_state: dict[str, Any] = {"dir": None, "hits": 0, "misses": 0}


def _digest(env: Any, kind: str, source: str, *parts: object) -> str:
    compile_ctx = _jinja_bits._TemplateCompileContext.current(optional=True)
    settings = (
        FORMAT,
        kind,
        sys.version,
        jinja2.__version__,
        ansible_core_version,
        type(env).__qualname__,
        env.code_generator_class.__qualname__,
        tuple(getattr(env, name) for name in _jinja_bits._TEMPLATE_OVERRIDE_FIELD_NAMES),
        env.optimized,
        env.is_async,
        tuple(sorted(env.extensions)),
        bool(compile_ctx and compile_ctx.escape_backslashes),
        _jinja_common._TemplateConfig.allow_embedded_templates,
        parts,
    )
    h = hashlib.sha256(repr(settings).encode())
    h.update(b"\0")
    h.update(source.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _load(key: str) -> types.CodeType | None:
    code = _memo.get(key)
    if code is not None:
        return code
    try:
        code = marshal.loads((_state["dir"] / key).read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return None
    if not isinstance(code, types.CodeType):
        return None
    _memo[key] = code
    return code


def _store(key: str, code: types.CodeType) -> None:
    _memo[key] = code
    directory: Path = _state["dir"]
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(marshal.dumps(code))
        os.replace(tmp, directory / key)  # whole or absent, for workers reading at the same time
    except OSError:
        pass  # a cache that cannot be written only costs the compile next time


def _cached(
    kind: str, env: Any, source: str, parts: tuple[object, ...], build: Callable[[], types.CodeType]
) -> types.CodeType:
    key = _digest(env, kind, source, *parts)
    code = _load(key)
    if code is None:
        _state["misses"] += 1
        code = build()
        _store(key, code)
    else:
        _state["hits"] += 1
    return code


def install(directory: Path) -> None:
    """Patch AnsibleEnvironment's compile and compile_expression (once per process); the code
    files go to `directory`, made private to the user."""
    _state["dir"] = directory
    env_class: Any = _jinja_bits.AnsibleEnvironment
    if getattr(env_class, "_kafkakit_code_cache", False):
        return
    plain_compile = env_class.compile
    plain_compile_expression = env_class.compile_expression

    def compile_source(
        self: Any,
        source: Any,
        name: str | None = None,
        filename: str | None = None,
        raw: bool = False,
        defer_init: bool = False,
    ) -> Any:
        if raw or not isinstance(source, str) or self._debuggable_template_source:
            return plain_compile(self, source, name, filename, raw, defer_init)
        return _cached(
            "template",
            self,
            source,
            (name, filename, defer_init),
            lambda: plain_compile(self, source, name, filename, raw, defer_init),
        )

    def compile_expression(self: Any, source: str, undefined_to_none: bool = True) -> TemplateExpression:
        if self._debuggable_template_source:
            return plain_compile_expression(self, source, undefined_to_none)

        def build() -> types.CodeType:
            # Jinja's compile_expression compiles a template node of the expression: keep its code.
            captured: list[types.CodeType] = []

            def capture(node: Any, *args: Any, **kwargs: Any) -> Any:
                code = plain_compile(self, node, *args, **kwargs)
                if isinstance(node, nodes.Template):
                    captured.append(code)
                return code

            self.compile = capture
            try:
                plain_compile_expression(self, source, undefined_to_none)
            finally:
                del self.compile  # back to the class's method
            if len(captured) != 1:
                raise RuntimeError(f"compile_expression compiled {len(captured)} templates, not one")
            return captured[0]

        code = _cached("expression", self, source, (), build)
        template = self.template_class.from_code(self, code, self.make_globals(None), None)
        return TemplateExpression(template, undefined_to_none)

    env_class.compile = compile_source
    env_class.compile_expression = compile_expression
    env_class._kafkakit_code_cache = True


def counts() -> tuple[int, int]:
    """(hits, misses) of this process."""
    return _state["hits"], _state["misses"]

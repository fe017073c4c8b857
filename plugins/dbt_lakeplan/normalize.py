"""A node's SQL as logic: rendered in a Jinja context where nothing depends on the run, then normalised
with sqlglot (Spark dialect) so comments, whitespace and hints never count.

Stable rendering: `ref()` becomes the referenced node's unique_id (so ephemeral, view or table upstream
render alike), `source()` and `scan_source()` the source's unique_id (so scan hints never appear), `var()`
the project's default (never --vars), and anything that changes per run (`run_started_at`,
`invocation_id`, `env_var()`, `modules.datetime...`) a fixed placeholder. Other macros render as their call
text; what they do enters the fingerprint through their own definitions.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

import jinja2
import sqlglot
from sqlglot import exp

COMMENTS = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)


class _Placeholder(jinja2.ChainableUndefined):
    """Renders an unknown name as itself and a call as its call text, e.g. `datagen(100, {...})`."""

    def __str__(self) -> str:
        return self._undefined_name or ""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Placeholder(name=f"{self._undefined_name}.{name}")

    def __call__(self, *args, **kwargs) -> str:
        arguments = [json.dumps(a, sort_keys=True, default=str) for a in args]
        arguments += [f"{k}={json.dumps(v, sort_keys=True, default=str)}" for k, v in sorted(kwargs.items())]
        return f"{self._undefined_name}({', '.join(arguments)})"


class _Config(dict):
    """`config(...)` renders nothing; `config.get(...)` reads the node's config."""

    def __call__(self, *args, **kwargs) -> str:
        return ""


_ENVIRONMENT = jinja2.Environment(undefined=_Placeholder, extensions=["jinja2.ext.do"], autoescape=False)
# `{{ ref('a') }}`, `{{ source('a', 'b') }}`, `{{ config(materialized='table') }}`: arguments without calls in them
QUOTED = re.compile(r"'([^'\\]*)'|\"([^\"\\]*)\"")
STRING_ARGUMENTS = re.compile(r"\s*(?:'[^'\\]*'|\"[^\"\\]*\")(?:\s*,\s*(?:'[^'\\]*'|\"[^\"\\]*\"))*\s*")
SIMPLE_CALL = re.compile(
    r"\{\{\s*(ref|source|scan_source|config)\(((?:[^()'\"{}]|'[^'\\]*'|\"[^\"\\]*\")*)\)\s*\}\}"
)


def render_stable(
    raw_sql: str,
    *,
    resolve_ref: Callable[..., str],
    resolve_source: Callable[[str, str], str],
    project_vars: dict[str, Any],
    config: dict[str, Any],
    this: str,
    incremental: bool,
) -> str:
    """The node's SQL rendered so that only its logic shows; raises jinja2 errors it cannot render."""
    context = {
        "ref": lambda *args, **kwargs: f"`{resolve_ref(*args, **kwargs)}`",
        "source": lambda source, table: f"`{resolve_source(source, table)}`",
        "scan_source": lambda source, table: f"`{resolve_source(source, table)}`",
        "var": lambda name, default=None: project_vars.get(name, default),
        "env_var": lambda name, default=None: f"env_var({name})",
        "config": _Config(config),
        "is_incremental": lambda: incremental,
        "this": f"`{this}`",
        "execute": True,
        "run_started_at": "run_started_at",
        "invocation_id": "invocation_id",
    }
    return _render_simple(raw_sql, context) or _ENVIRONMENT.from_string(raw_sql).render(context)


def _render_simple(raw_sql: str, context: dict[str, Any]) -> str | None:
    """What Jinja renders for SQL whose only Jinja is ref/source/config calls with literal arguments (most
    models), without compiling a template (the costly part at thousands of nodes); None for anything else."""
    if "\r" in raw_sql or "{{-" in raw_sql or "-}}" in raw_sql:
        return None

    def call(match: re.Match) -> str:
        name, arguments = match.groups()
        if name == "config":
            return ""
        if not STRING_ARGUMENTS.fullmatch(arguments):
            raise ValueError(name)  # keyword arguments, numbers, escapes: Jinja decides
        return context[name](*(single or double for single, double in QUOTED.findall(arguments)))

    try:
        rendered = SIMPLE_CALL.sub(call, raw_sql)
    except (ValueError, TypeError):
        return None
    if "{{" in rendered or "{%" in rendered or "{#" in rendered:
        return None
    return rendered[:-1] if rendered.endswith("\n") else rendered  # Jinja drops one trailing newline


def normalize_sql(sql: str) -> str:
    """Spark SQL without comments, hints or layout; text with comments and whitespace folded when sqlglot
    cannot parse it (still deterministic, only less forgiving of cosmetic edits)."""
    try:
        statements = [tree for tree in sqlglot.parse(sql, read="spark") if tree is not None]
    except sqlglot.errors.SqlglotError:
        statements = []
    if not statements:
        return " ".join(COMMENTS.sub(" ", sql).split())
    for tree in statements:
        for hint in list(tree.find_all(exp.Hint)):
            hint.pop()
    return ";\n".join(tree.sql(dialect="spark", comments=False, copy=False) for tree in statements)

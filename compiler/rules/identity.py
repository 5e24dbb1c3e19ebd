"""Identity rules: name, kind, id and subject in frontmatter; uniqueness across the project."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator

from .. import diagnostics as diag
from ..diagnostics import Diagnostic, Edit, Fix
from ..frozen import thaw
from ..ir import KINDS, NODE_KINDS, RETIRED_KINDS, Contract, ContractKind, Project, Span
from .context import RuleContext

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_ID = re.compile(r"^[0-7][0-9A-HJKMNP-TV-Z]{25}$")


def check(contract: Contract, context: RuleContext) -> Iterator[Diagnostic]:
    if contract.inline:
        yield from _check_inline(contract)
        return
    source = context.source
    if not source.has_frontmatter or source.frontmatter_span is None or source.frontmatter_error:
        return  # frontmatter_missing / frontmatter_invalid already say everything
    fm = contract.frontmatter
    span = source.frontmatter_span
    if fm.get("name") in (None, ""):
        yield diag.make("name_missing", "frontmatter has no `name:`", _first_line(span))
    elif not valid_name(contract.name):
        yield diag.make(
            "name_invalid",
            f"name {contract.name!r} must be non-empty, not `.` or `..`, and contain no `/`, `\\` "
            "or whitespace",
            contract.name_span,
        )
    kind_span = contract.frontmatter_spans.get("kind", _first_line(span))
    kind = contract.kind
    if fm.get("kind") in (None, ""):
        yield diag.make(
            "kind_missing",
            "frontmatter has no `kind:` (responsibility, function, gateway, pattern or test)",
            _first_line(span),
        )
    elif kind in RETIRED_KINDS:
        yield diag.make(
            "kind_retired",
            f"kind `{kind}` is retired; use `{RETIRED_KINDS[kind]}` "
            + (
                "(a stateless called helper)"
                if kind == "service"
                else "(compose with `call` or subscriptions between responsibilities)"
            ),
            kind_span,
            _retired_kind_fix(kind, kind_span, source.text),
        )
    elif kind not in KINDS:
        yield diag.make(
            "kind_unknown",
            f"unknown kind `{kind}`; expected one of {', '.join(KINDS)}",
            kind_span,
        )
    if kind == ContractKind.RESPONSIBILITY:
        yield from _check_id(contract, span, source.text)
    if kind == ContractKind.TEST and not contract.subject:
        yield diag.make(
            "subject_missing",
            "a test needs `subject:` naming the responsibility or function it runs",
            _first_line(span),
        )


def _check_inline(contract: Contract) -> Iterator[Diagnostic]:
    if not valid_name(contract.name):
        yield diag.make(
            "name_invalid",
            f"inline node name {contract.name!r} must be non-empty and contain no separators",
            contract.name_span,
        )


def _retired_kind_fix(kind: str, span: Span, text: str) -> Fix | None:
    """`kind: service` → `kind: function`, when the line says exactly that. Unsafe: a
    service may have kept state that a function does not."""
    lines = text.split("\n")
    if kind != "service" or span.line != span.end_line or span.line > len(lines):
        return None
    if lines[span.line - 1].strip() != "kind: service":
        return None
    return Fix(
        title="Change the kind to `function`",
        edits=(Edit(span=span, new_text="kind: function"),),
        safe=False,
    )


def _check_id(contract: Contract, fm_span: Span, text: str) -> Iterator[Diagnostic]:
    raw = contract.frontmatter.get("id")
    if raw in (None, ""):
        kind_span = contract.frontmatter_spans.get("kind", _first_line(fm_span))
        # derived from the file as it is, so `--diff` previews the id `--fix` writes and the
        # editor inserts the same one; a copy of a file under another name gets another id
        new_id = suggested_id(f"{contract.name}\n{text}")
        # insert on the line after `kind:`; when `kind:` ends the file, after its last column
        line, column, new_text = kind_span.end_line + 1, 1, f"id: {new_id}\n"
        if line > text.count("\n") + 1:
            line, column, new_text = kind_span.end_line, kind_span.end_column, f"\nid: {new_id}"
        insert_at = Span(
            path=kind_span.path, line=line, column=column, end_line=line, end_column=column
        )
        yield diag.make(
            "id_missing",
            f"responsibility `{contract.name}` has no `id:`, so renaming it would not carry "
            "its state over; `prosec lint --fix` adds one",
            contract.name_span,
            Fix(
                title=f"Add `id: {new_id}`",
                edits=(Edit(span=insert_at, new_text=new_text),),
            ),
        )
        return
    value = str(thaw(raw))  # a YAML list or mapping reads as written, not as a frozen value
    if not _ID.match(value):
        yield diag.make(
            "id_malformed",
            f"id {value!r} is not 26 uppercase Crockford base32 characters starting with 0–7 "
            "(a 128-bit value, the form `prosec lint --fix` writes)",
            contract.frontmatter_spans.get("id", fm_span),
        )


def suggested_id(seed: str) -> str:
    """A valid id derived from `seed` (the first 128 bits of its SHA-256, with the version
    and variant bits of a UUIDv7 set, as 26 Crockford base32 characters): deterministic, so
    lint output and `--fix` are the same on every machine."""
    import hashlib  # only needed when an id is missing; keeps `prosec lint` start-up lean

    raw = bytearray(hashlib.sha256(seed.encode("utf-8")).digest()[:16])
    raw[6] = (raw[6] & 0x0F) | 0x70  # version 7
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    return encode_crockford(bytes(raw))


def encode_crockford(raw: bytes) -> str:
    """128 bits → 26 Crockford base32 characters (two zero pad bits in front)."""
    value = int.from_bytes(raw, "big")
    return "".join(CROCKFORD[(value >> (5 * i)) & 31] for i in reversed(range(26)))


def check_project(project: Project) -> Iterator[Diagnostic]:
    # inline helpers (functions, patterns, tests) are file-local; file-level contracts and
    # every node (responsibility, gateway) share the project namespace
    by_name: dict[tuple[str, str], list[Contract]] = defaultdict(list)
    by_id: dict[str, list[Contract]] = defaultdict(list)
    for contract in project.contracts:
        if contract.name:
            scope = contract.path if contract.inline and contract.kind not in NODE_KINDS else ""
            by_name[(scope, contract.name)].append(contract)
        if contract.kind == ContractKind.RESPONSIBILITY and contract.id:
            by_id[contract.id].append(contract)
    for (_, name), group in sorted(by_name.items()):
        if len(group) > 1:
            for contract in group[1:]:
                first = group[0]
                yield diag.make(
                    "name_duplicate",
                    f"name `{name}` is already used by {first.path}:{first.name_span.line}",
                    contract.name_span,
                )
    for ident, group in sorted(by_id.items()):
        if len(group) > 1:
            for contract in group[1:]:
                first = group[0]
                yield diag.make(
                    "id_duplicate",
                    f"id {ident} is already used by `{first.name}` ({first.path})",
                    contract.frontmatter_spans.get("id", contract.name_span),
                )
    yield from _check_subjects(project)


def _check_subjects(project: Project) -> Iterator[Diagnostic]:
    # any contract: a subject of the wrong kind is `test_subject_kind` (the tests pass)
    runnable = {c.name for c in project.contracts if c.kind != ContractKind.TEST}
    directories = [f.path.rpartition("/")[0] for f in project.files]
    for contract in project.contracts:
        if contract.kind != ContractKind.TEST or not contract.subject:
            continue
        if directories.count(contract.path.rpartition("/")[0]) < 2:
            continue  # its neighbours were not loaded, so the subject cannot be looked up
        subject = contract.subject.rsplit("/", 1)[-1].removesuffix(".prose.md")
        if subject not in runnable and "/" not in contract.subject:
            yield diag.make(
                "subject_unknown",
                f"test subject `{contract.subject}` names no contract in this project",
                contract.frontmatter_spans.get("subject", contract.name_span),
            )


def valid_name(name: str) -> bool:
    """A node name is a directory name at run time: the runtime refuses the rest."""
    return name not in ("", ".", "..") and not any(
        ch in "/\\\x7f" or ch.isspace() or ord(ch) < 0x20 for ch in name
    )


def _first_line(span: Span) -> Span:
    return Span(path=span.path, line=span.line, column=1, end_line=span.line, end_column=4)

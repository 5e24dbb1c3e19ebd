"""Diagnostic values and the one table of diagnostic codes, severities and summaries."""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum

from .ir import Span
from .values import value


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "info": 2}[self.value]


@value(kw_only=True)
class Edit:
    """Replace the text in `span` with `new_text` (an empty span inserts)."""

    span: Span
    new_text: str


@value(kw_only=True)
class Fix:
    """A machine-applicable repair offered with a diagnostic. A safe fix keeps what the
    program means; an unsafe one (`safe=False`) may change it, so `prosec lint --fix`
    applies it only with `--unsafe-fixes` (the editor offers both)."""

    title: str
    edits: tuple[Edit, ...]
    safe: bool = True


@value(kw_only=True)
class Diagnostic:
    """One finding: a stable code, its severity, a one-line message and where it points."""

    code: str
    severity: Severity
    message: str
    span: Span
    fix: Fix | None = None

    def sort_key(self) -> tuple[str, int, int, int, str, str]:
        s = self.span
        return (s.path, s.line, s.column, self.severity.rank, self.code, self.message)

    def with_severity(self, severity: Severity) -> Diagnostic:
        return replace(self, severity=severity)


@value
class CodeInfo:
    severity: Severity
    summary: str
    strict_severity: Severity | None = None  # severity under --strict, when it differs


ERR, WARN, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

# The single registry of codes. Adding a rule means adding its code here, a failing
# example under corpus/invalid/<code>/ and a line in the README's table.
CODES: dict[str, CodeInfo] = {
    # files and frontmatter
    "internal_error": CodeInfo(ERR, "prosec hit a bug while checking this file; please report it"),
    "file_unreadable": CodeInfo(ERR, "the file cannot be read or is not UTF-8"),
    "config_invalid": CodeInfo(ERR, "prose.toml cannot be read or holds an invalid setting"),
    "file_too_large": CodeInfo(WARN, "the file is too large to analyse as you type"),
    "legacy_program": CodeInfo(WARN, "a legacy `.prose` program: `prosec upgrade` migrates it"),
    "frontmatter_missing": CodeInfo(ERR, "the file has no YAML frontmatter block"),
    "frontmatter_invalid": CodeInfo(ERR, "the frontmatter is not valid YAML or not a mapping"),
    "frontmatter_unterminated": CodeInfo(ERR, "the frontmatter block is never closed with `---`"),
    "name_missing": CodeInfo(ERR, "the contract has no `name`"),
    "name_invalid": CodeInfo(ERR, "the contract name is empty or contains path separators"),
    "kind_missing": CodeInfo(ERR, "the contract has no `kind`"),
    "kind_unknown": CodeInfo(ERR, "the `kind` is not one of the five OpenProse kinds"),
    "kind_retired": CodeInfo(ERR, "the `kind` is retired (`service`, `system`)"),
    "id_missing": CodeInfo(WARN, "a responsibility has no `id:`", strict_severity=ERR),
    # node identity is the name; an id in another format is spec drift, never a blocker
    "id_malformed": CodeInfo(
        WARN, "the `id:` is not 26 characters of Crockford base32", strict_severity=ERR
    ),
    "subject_missing": CodeInfo(ERR, "a test has no `subject:`"),
    "subject_unknown": CodeInfo(WARN, "a test's `subject:` names no contract of its project"),
    "test_subject_kind": CodeInfo(ERR, "a test's subject is not a responsibility or function"),
    "test_fixture_missing": CodeInfo(ERR, "a test's fixtures leave a required input unbound"),
    "test_fixture_unknown": CodeInfo(ERR, "a test fixture binds nothing its subject requires"),
    "test_output_unknown": CodeInfo(
        WARN, "a test asserts on an output its subject never maintains"
    ),
    "name_duplicate": CodeInfo(ERR, "two contracts in the project share a name"),
    "id_duplicate": CodeInfo(ERR, "two responsibilities in the project share an `id:`"),
    # sections
    "section_retired": CodeInfo(WARN, "a judge-era section that folds into another section"),
    "section_wrong_kind": CodeInfo(WARN, "a section that does not apply to this kind"),
    "section_unknown": CodeInfo(INFO, "a `###` section OpenProse does not define (kept as text)"),
    "section_duplicate": CodeInfo(WARN, "the same `###` section appears twice in one contract"),
    "section_outside_maintains": CodeInfo(
        WARN, "`### Facets` or `### Postconditions` written as a block of its own"
    ),
    "maintains_missing": CodeInfo(ERR, "a responsibility or gateway has no `### Maintains`"),
    "returns_missing": CodeInfo(WARN, "a function has no `### Returns`"),
    "gateway_not_external": CodeInfo(ERR, "a gateway's continuity is not external-driven"),
    "facet_duplicate": CodeInfo(ERR, "two `####` facets of one `### Maintains` share a name"),
    "facet_reserved": CodeInfo(ERR, "a facet uses a reserved name such as `@atomic`"),
    "continuity_unclear": CodeInfo(WARN, "`### Continuity` does not say input, self or external"),
    "cadence_missing": CodeInfo(INFO, "a self-driven `### Continuity` states no cadence"),
    "runtime_setting_invalid": CodeInfo(
        WARN, "a `### Runtime` `persist` or `model` value that does not compile"
    ),
    "fence_unterminated": CodeInfo(ERR, "a code fence is never closed"),
    "yaml_invalid": CodeInfo(ERR, "a fenced ```yaml block is not valid YAML"),
    # tools and skills (codes kept verbatim from the upstream compiler)
    "tool_invalid": CodeInfo(ERR, "a `### Tools` entry is not `cli:<name>` or `mcp:<name>`"),
    "tool_unsupported_kind": CodeInfo(ERR, "a `### Tools` entry uses a reserved namespace"),
    "tool_unresolved": CodeInfo(ERR, "a declared tool is not on PATH or in the MCP registry"),
    "skill_invalid": CodeInfo(ERR, "a `### Skills` entry is not `name` or `namespace:name`"),
    "skill_unresolved": CodeInfo(ERR, "a declared skill is not installed in any search path"),
    # ProseScript
    "prosescript_syntax": CodeInfo(ERR, "a ```prose fence does not parse as ProseScript"),
    # errors, as prosescript.md says: on the upstream corpus neither produced a false positive
    "prosescript_undefined_name": CodeInfo(ERR, "ProseScript reads a name that is never bound"),
    "prosescript_unknown_call": CodeInfo(ERR, "`call` names no function, `use` alias or slot"),
    "prosescript_unbounded_loop": CodeInfo(WARN, "an open `loop` has no `(max: N)` bound"),
    "prosescript_legacy_io": CodeInfo(ERR, "legacy `input`/`output` declarations in ProseScript"),
    "prosescript_unbounded_for_each": CodeInfo(ERR, "`loop for each` has no `(max: N)` bound"),
    "prosescript_count_invalid": CodeInfo(
        ERR, "a repeat count, loop `max`, `count` or `retry` is not a positive integer"
    ),
    "prosescript_count_without_any": CodeInfo(ERR, 'a parallel `count` without the `"any"` join'),
    "prosescript_parallel_modifier_invalid": CodeInfo(
        ERR, "an unknown parallel join strategy, failure policy or modifier"
    ),
    "prosescript_try_without_handler": CodeInfo(ERR, "`try` has neither `catch` nor `finally`"),
    "prosescript_throw_outside_catch": CodeInfo(ERR, "a bare `throw` outside any `catch`"),
    "prosescript_duplicate_binding": CodeInfo(ERR, "a name is bound twice in the same scope"),
    "prosescript_shadowed_binding": CodeInfo(
        WARN, "a binding hides an outer binding of the script"
    ),
    "prosescript_immutable_reassigned": CodeInfo(
        ERR, "a `const`, loop, catch or block-parameter name is reassigned"
    ),
    "prosescript_assign_undeclared": CodeInfo(ERR, "`name = …` before any `let name`"),
    "prosescript_duplicate_definition": CodeInfo(
        ERR, "two agents, blocks or `use` aliases share a name"
    ),
    "prosescript_duplicate_property": CodeInfo(ERR, "a property block repeats a key"),
    "prosescript_duplicate_option": CodeInfo(WARN, "a `choice` offers the same option label twice"),
    "prosescript_block_arity": CodeInfo(ERR, "`do block(…)` passes the wrong number of arguments"),
    "prosescript_backoff_invalid": CodeInfo(ERR, "`backoff` is not none, linear or exponential"),
    "prosescript_backoff_without_retry": CodeInfo(WARN, "`backoff` without `retry`"),
    "prosescript_resume_not_persistent": CodeInfo(
        ERR, "`resume:` names an agent without `persist`"
    ),
    "prosescript_use_after_statement": CodeInfo(ERR, "`use` after an executable statement"),
    "prosescript_use_empty": CodeInfo(ERR, "`use` names an empty dependency"),
    "prosescript_use_alias_invalid": CodeInfo(ERR, "a `use` alias is not an identifier"),
    "prosescript_use_alias_duplicate": CodeInfo(ERR, "two `use` statements share an alias"),
    "prosescript_use_alias_collision": CodeInfo(
        ERR, "a `use` alias is also the name of a block or agent"
    ),
    "prosescript_bad_escape": CodeInfo(ERR, "a string uses an unknown `\\` escape"),
    "prosescript_loop_control_misplaced": CodeInfo(
        ERR, "`break` or `continue` outside a loop, or leaving a parallel branch"
    ),
    "prosescript_builtin_arity": CodeInfo(
        ERR, "a builtin (`read_world_model(…)`, …) gets the wrong arguments"
    ),
    "prosescript_render_operation": CodeInfo(
        INFO, "`name(…)` names no builtin, function or binding: the render performs it"
    ),
    "execution_unfenced": CodeInfo(INFO, "`### Execution` is written as unfenced pseudocode"),
    # dependencies: resolved on disk, from deps/ (`prosec install` fills it)
    "dependency_missing": CodeInfo(ERR, "a dependency is not installed in deps/"),
    "dependency_unresolved": CodeInfo(
        ERR, "a reference is malformed, a bare `owner/repo`, or names no file"
    ),
    # build: the project
    "sources_empty": CodeInfo(INFO, "the project has no `.prose.md` sources to compile"),
    # build: Forme wiring
    "wiring_ambiguous": CodeInfo(
        WARN, "a need matches several producers on one rung and is left unwired", ERR
    ),
    "wiring_unsatisfied": CodeInfo(WARN, "no producer satisfies a `### Requires` need", ERR),
    "wiring_mentioned": CodeInfo(
        INFO, "a need is wired only because its prose mentions a producer"
    ),
    "wiring_self": CodeInfo(INFO, "a need names its own node: feedback is self continuity"),
    "wiring_cycle": CodeInfo(ERR, "the subscription graph has a cycle"),
    "emits_unknown": CodeInfo(WARN, "a gateway's `### Emits` names no node", ERR),
    "pin_stale": CodeInfo(
        ERR, "a `[[wiring.pin]]` names a node, need or facet that does not exist"
    ),
    "facet_not_emitted": CodeInfo(ERR, "an edge subscribes to a facet its producer does not emit"),
    # never an error: the template is mounted once, on `@atomic`
    "template_unexpanded": CodeInfo(
        WARN, "a contract template's instances cannot be decided; it is mounted once"
    ),
    # build: pattern expansion
    "pattern_unknown": CodeInfo(ERR, "a pattern instance names no `kind: pattern` contract"),
    "pattern_slot_unbound": CodeInfo(ERR, "a pattern instance leaves a required slot unbound"),
    "pattern_slot_unknown": CodeInfo(ERR, "a pattern instance binds a slot the pattern lacks"),
    "pattern_config_unknown": CodeInfo(
        ERR, "a pattern instance sets a config key the pattern lacks"
    ),
    # build: canonicalizers and postconditions
    "clause_unlowered": CodeInfo(
        WARN, "a materiality clause names no fields and cannot be enforced"
    ),
    "structured_backing_missing": CodeInfo(WARN, "a subscribed facet has no structured backing"),
    "canonicalizer_invalid": CodeInfo(ERR, "an explicit canonicalizer block is not a valid spec"),
}


def code_families() -> tuple[str, ...]:
    """The `prefix*` patterns a setting may name: `*` (every code) and each prefix of a
    code that ends at an underscore (`wiring_*`, `prosescript_count_*`), sorted.
    schemas/config.schema.json lists the same (a test keeps them equal)."""
    prefixes = {code[: i + 1] for code in CODES for i, char in enumerate(code) if char == "_"}
    return ("*", *sorted(f"{prefix}*" for prefix in prefixes))


def make(code: str, message: str, span: Span, fix: Fix | None = None) -> Diagnostic:
    """Build a diagnostic with the registered default severity of `code`."""
    return Diagnostic(code=code, severity=CODES[code].severity, message=message, span=span, fix=fix)


def has_errors(diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> bool:
    return any(d.severity is Severity.ERROR for d in diagnostics)

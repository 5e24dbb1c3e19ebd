"""ProseScript name resolution: undefined names, unknown call targets and binding misuse."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from ..ir import Span
from .bindings import IMMUTABLE, Binding, Kind, Scope
from .builtins import BUILTINS, Builtin, builtin
from .ir import (
    AgentDef,
    Append,
    Apply,
    ArrayExpr,
    Assign,
    BlockDef,
    Choice,
    DoBlock,
    DoCall,
    Expr,
    ExprStmt,
    Filter,
    For,
    If,
    Index,
    Invocation,
    InvocationKind,
    LegacyIO,
    Let,
    Loop,
    Member,
    Name,
    ObjectExpr,
    Parallel,
    PipeKind,
    Pipeline,
    Place,
    Property,
    Ref,
    Repeat,
    Return,
    Script,
    Stmt,
    StringLit,
    Throw,
    Try,
    Use,
    Value,
)
from .scope import ContractScope, key

# property keys whose bare single-name values are host identifiers (`model: sonnet`,
# `backoff: exponential`, `persist: project`) unless a binding of that name exists
_IDENTIFIER_KEYS = frozenset({"model", "persist", "backoff"})


def _close(word: str, candidates: Iterable[str], n: int = 1, cutoff: float = 0.6) -> list[str]:
    """The nearest candidates, for a "did you mean" (difflib loads only when one is needed)."""
    import difflib

    return difflib.get_close_matches(word, list(candidates), n=n, cutoff=cutoff)


def _count(found: Builtin) -> str:
    """How many arguments a builtin takes, in words."""
    if found.variadic:
        return f"at least {found.required} argument{'s' if found.required != 1 else ''}"
    if found.required == len(found.params):
        return f"{found.required} argument{'s' if found.required != 1 else ''}"
    return f"{found.required} to {len(found.params)} arguments"


@functools.lru_cache(maxsize=8)
def _keyed(targets: frozenset[str]) -> Mapping[str, str]:
    """Call targets by `key`; of names spelling one key, the last in sorted order. The
    contracts of one directory share one targets set, so this is built once for them
    (a frozenset keeps its hash, and the cache finds the very same object first)."""
    return MappingProxyType({key(name): name for name in sorted(targets)})


def check_names(script: Script, scope: ContractScope) -> list[Diagnostic]:
    """Every name diagnostic of one fence, in the order the walk finds them."""
    return _Walker(scope).run(script, scope.inputs)


class _Walker:
    def __init__(self, contract: ContractScope) -> None:
        self.contract = contract
        self.targets = _keyed(contract.call_targets)
        self.found: list[Diagnostic] = []
        self.agents: dict[str, AgentDef] = {}
        self.blocks: dict[str, BlockDef] = {}
        self.siblings: set[str] = set()  # bound by another branch of the enclosing `parallel:`

    def run(self, script: Script, inputs: Iterable[str]) -> list[Diagnostic]:
        contract_scope = Scope(parent=None, script_level=False)
        for name in inputs:
            contract_scope.names.setdefault(key(name), Binding(name, Kind.INPUT, None))
        top = Scope(parent=contract_scope)
        # `use`, agents and blocks are collected before any statement runs
        for stmt in script.statements:
            if isinstance(stmt, Use) and stmt.alias is not None:
                self.bind(top, stmt.alias, Kind.ALIAS)
            elif isinstance(stmt, AgentDef):
                self.agents.setdefault(key(stmt.name.text), stmt)
                self.bind(top, stmt.name, Kind.AGENT)
            elif isinstance(stmt, BlockDef):
                self.blocks.setdefault(key(stmt.name.text), stmt)
                self.bind(top, stmt.name, Kind.BLOCK)
        self.statements(script.statements, top, in_catch=False)
        for stmt in script.statements:
            if isinstance(stmt, BlockDef):
                body_scope = Scope(parent=top, block_body=True)
                for param in stmt.params:
                    self.bind(body_scope, param, Kind.PARAM)
                self.statements(stmt.body, body_scope, in_catch=False)
        return self.found

    # -- bindings -------------------------------------------------------------------------

    def bind(self, scope: Scope, name: Name, kind: Kind, *, shadow: bool = True) -> None:
        existing = scope.names.get(key(name.text))
        if existing is not None:
            if existing.kind in (Kind.AGENT, Kind.BLOCK, Kind.ALIAS) and kind in (
                Kind.AGENT,
                Kind.BLOCK,
                Kind.ALIAS,
            ):
                return  # duplicate definitions are reported by the local checks
            where = f" on line {existing.span.line}" if existing.span else ""
            self.found.append(
                diag.make(
                    "prosescript_duplicate_binding",
                    f"`{name.text}` is already bound in this scope{where} ({existing.kind.value}); "
                    "assign to it with `name = …` or choose another name",
                    name.span,
                )
            )
            return
        outer = None
        if shadow and scope.parent is not None and not scope.block_body:
            outer = scope.parent.lookup_script(name.text)
        if outer is not None and outer.kind not in (Kind.AGENT, Kind.BLOCK, Kind.ALIAS):
            where = f" on line {outer.span.line}" if outer.span else ""
            self.found.append(
                diag.make(
                    "prosescript_shadowed_binding",
                    f"`{name.text}` shadows the {outer.kind.value} bound{where}; the outer value "
                    f"is unchanged after this block (to update it, write `{name.text} = …`)",
                    name.span,
                )
            )
        scope.names[key(name.text)] = Binding(name.text, kind, name.span)

    # -- statements -----------------------------------------------------------------------

    def statements(self, stmts: Iterable[Stmt], scope: Scope, *, in_catch: bool) -> None:
        for stmt in stmts:
            self.statement(stmt, scope, in_catch=in_catch)

    def statement(self, stmt: Stmt, scope: Scope, *, in_catch: bool) -> None:
        if isinstance(stmt, Let):
            self.value(stmt.value, scope, in_catch=in_catch)
            for name in stmt.names:
                self.bind(scope, name, Kind.CONST if stmt.const else Kind.LET)
        elif isinstance(stmt, Assign):
            self.value(stmt.value, scope, in_catch=in_catch)
            self.assign(stmt.target, scope)
        elif isinstance(stmt, Append):
            self.expr(stmt.item, scope)
            self.assign(stmt.target, scope, appending=True)
        elif isinstance(stmt, Return | Throw):
            if stmt.value is not None:
                self.value(stmt.value, scope, in_catch=in_catch)
            elif isinstance(stmt, Throw) and not in_catch:
                self.found.append(
                    diag.make(
                        "prosescript_throw_outside_catch",
                        "a bare `throw` re-raises the active error, and there is none outside "
                        '`catch`; throw a value instead (`throw "reason"`)',
                        stmt.span,
                    )
                )
        elif isinstance(stmt, ExprStmt):
            self.value(stmt.value, scope, in_catch=in_catch)
        elif isinstance(stmt, AgentDef):
            self.properties(stmt.properties, scope)
        elif isinstance(stmt, LegacyIO):
            if stmt.value is not None:
                self.value(stmt.value, scope, in_catch=in_catch)
            self.bind(scope, stmt.name, Kind.INPUT)
        elif isinstance(stmt, If):
            for branch in stmt.branches:
                self.statements(branch.body, Scope(parent=scope), in_catch=in_catch)
        elif isinstance(stmt, Choice):
            for option in stmt.options:
                self.statements(option.body, Scope(parent=scope), in_catch=in_catch)
        elif isinstance(stmt, Try):
            self.statements(stmt.body, Scope(parent=scope), in_catch=in_catch)
            if stmt.catch is not None:
                catch_scope = Scope(parent=scope)
                if stmt.catch.name is not None:
                    self.bind(catch_scope, stmt.catch.name, Kind.CATCH)
                self.statements(stmt.catch.body, catch_scope, in_catch=True)
            if stmt.finally_body is not None:
                self.statements(stmt.finally_body, Scope(parent=scope), in_catch=in_catch)
        elif isinstance(stmt, DoBlock | Parallel | Repeat | For | Loop):
            self.value(stmt, scope, in_catch=in_catch)
        # Use and BlockDef were handled before the walk

    def assign(self, place: Place, scope: Scope, *, appending: bool = False) -> None:
        """A write to `place`: its name must be declared; only `name = …` rebinds it (an
        item, a property or `append` writes into the value the name holds)."""
        target: Expr = place
        while isinstance(target, Index | Member):
            if isinstance(target, Index):
                self.expr(target.key, scope)
            target = target.target
        assert isinstance(target, Ref), "the grammar writes only names, properties and items"
        binding = scope.lookup(target.head)
        if binding is None:
            what, start = ("appended to", "[]") if appending else ("assigned", "…")
            self.found.append(
                diag.make(
                    "prosescript_assign_undeclared",
                    f"`{target.head}` is {what} before it is declared; "
                    f"write `let {target.head} = {start}` first",
                    target.head_span,
                )
            )
            # bind it, so later reads of the same name do not repeat the finding
            scope.names[key(target.head)] = Binding(target.head, Kind.LET, target.head_span)
        elif (
            binding.kind in IMMUTABLE
            and not appending
            and place is target
            and len(target.parts) == 1
        ):
            self.found.append(
                diag.make(
                    "prosescript_immutable_reassigned",
                    f"`{target.head}` is a {binding.kind.value} and cannot be reassigned; "
                    f"bind a new name with `let`",
                    target.span,
                )
            )

    # -- values ---------------------------------------------------------------------------

    def value(self, value: Value, scope: Scope, *, in_catch: bool) -> None:
        if isinstance(value, DoBlock):
            self.statements(value.body, Scope(parent=scope), in_catch=in_catch)
        elif isinstance(value, Parallel):
            self.parallel(value, scope, in_catch=in_catch)
        elif isinstance(value, Repeat):
            self.expr(value.count, scope)
            self.loop_body(value.body, scope, [value.alias], in_catch=in_catch)
        elif isinstance(value, For):
            self.expr(value.iterable, scope)
            self.loop_body(value.body, scope, list(value.names), in_catch=in_catch)
        elif isinstance(value, Loop):
            for part in (value.iterable, value.max):
                if part is not None:
                    self.expr(part, scope)
            self.loop_body(value.body, scope, [value.item, value.alias], in_catch=in_catch)
        elif isinstance(value, Filter):
            self.expr(value.source, scope)  # the condition is discretion text, read by the VM
        elif isinstance(value, Pipeline):
            self.expr(value.source, scope)
            for op in value.ops:
                body_scope = Scope(parent=scope)
                if op.kind is PipeKind.REDUCE:
                    for name in op.names:
                        self.bind(body_scope, name, Kind.PIPE)
                else:  # map, filter and pmap bind `item` implicitly
                    body_scope.names[key("item")] = Binding("item", Kind.PIPE, op.span)
                self.statements(op.body, body_scope, in_catch=in_catch)
        else:
            self.expr(value, scope)

    def loop_body(
        self, body: tuple[Stmt, ...], scope: Scope, names: list[Name | None], *, in_catch: bool
    ) -> None:
        body_scope = Scope(parent=scope)
        for name in names:
            if name is not None:
                self.bind(body_scope, name, Kind.LOOP)
        self.statements(body, body_scope, in_catch=in_catch)

    def parallel(self, block: Parallel, scope: Scope, *, in_catch: bool) -> None:
        """Branches run concurrently: none sees another's bindings; all are visible after."""
        branch_scopes = []
        outer_siblings = self.siblings
        bound = [
            {key(n.text) for n in stmt.names} if isinstance(stmt, Let) else set()
            for stmt in block.body
        ]
        for index, stmt in enumerate(block.body):
            branch = Scope(parent=scope)
            self.siblings = outer_siblings.union(*(b for i, b in enumerate(bound) if i != index))
            self.statement(stmt, branch, in_catch=in_catch)
            branch_scopes.append(branch)
        self.siblings = outer_siblings
        for branch in branch_scopes:
            for binding in branch.names.values():
                if binding.span is not None:
                    self.bind(
                        scope,
                        Name(text=binding.name, span=binding.span),
                        binding.kind,
                        shadow=False,
                    )

    def expr(self, expr: Expr, scope: Scope, *, property_key: str = "") -> None:
        if isinstance(expr, Ref):
            self.read(expr, scope, property_key=property_key)
        elif isinstance(expr, StringLit):
            for interpolation in expr.interpolations:
                self.read_name(interpolation.parts[0], interpolation.span, scope, "interpolated ")
        elif isinstance(expr, ArrayExpr):
            for item in expr.items:
                self.expr(item, scope)
        elif isinstance(expr, ObjectExpr):
            for entry in expr.entries:
                self.expr(entry.value, scope)
        elif isinstance(expr, Invocation):
            self.invocation(expr, scope)
        elif isinstance(expr, DoCall):
            self.do_call(expr, scope)
        elif isinstance(expr, Apply):
            self.apply(expr, scope)
        elif isinstance(expr, Index):
            self.expr(expr.target, scope)
            self.expr(expr.key, scope)
        elif isinstance(expr, Member):
            self.expr(expr.target, scope)
        elif isinstance(expr, Pipeline):
            self.value(expr, scope, in_catch=False)

    def read(self, ref: Ref, scope: Scope, *, property_key: str = "") -> None:
        if property_key in _IDENTIFIER_KEYS and len(ref.parts) == 1 and not scope.lookup(ref.head):
            return
        self.read_name(ref.head, ref.head_span, scope, "")

    def read_name(self, name: str, span: Span, scope: Scope, what: str) -> None:
        if scope.lookup(name) is not None:
            return
        if key(name) in self.siblings:
            self.found.append(
                diag.make(
                    "prosescript_undefined_name",
                    f"`{name}` is bound by another branch of this `parallel:` and is not "
                    "available until the block joins",
                    span,
                )
            )
            return
        close = _close(name, sorted(set(scope.visible())), n=1, cutoff=0.8)
        hint = f"; did you mean `{close[0]}`?" if close else ""
        self.found.append(
            diag.make(
                "prosescript_undefined_name",
                f"{what}name `{name}` is never bound: no `let`, loop, parameter or declared "
                f"input of the contract defines it{hint}",
                span,
            )
        )

    def invocation(self, call: Invocation, scope: Scope) -> None:
        target = call.target
        if call.kind is InvocationKind.CALL and target is not None:
            self.call_target(target, call.target_is_string, scope)
        elif target is not None:
            self.read_name(target.text, target.span, scope, f"{call.kind.value} agent ")
        if call.prompt is not None:
            self.expr(call.prompt, scope)
        for arg in call.args or ():
            self.expr(arg.value, scope)
        if call.inputs is not None:
            self.expr(call.inputs, scope)
        self.properties(call.properties, scope)

    def call_target(self, target: Name, is_string: bool, scope: Scope) -> None:
        text = target.text
        if key(text) in self.agents:
            self.found.append(
                diag.make(
                    "prosescript_unknown_call",
                    f"`{text}` is an agent, not a function: start it with `session: {text}`",
                    target.span,
                )
            )
            return
        if (
            is_string
            or "/" in text
            or scope.lookup(text) is not None  # a slot or delegate held in a variable
            or key(text) in self.targets
            or not self.contract.check_calls
        ):
            return
        if builtin(text) is not None:
            self.found.append(
                diag.make(
                    "prosescript_unknown_call",
                    f"`{text}` is a builtin, not a function: write `{text}(…)` without `call`",
                    target.span,
                )
            )
            return
        close = _close(text, sorted(self.targets.values()), n=1)
        hint = f"; did you mean `{close[0]}`?" if close else ""
        self.found.append(
            diag.make(
                "prosescript_unknown_call",
                f"`call {text}` names no function in this file or directory, no `use` alias, "
                f"slot, `### Shape` delegate or pattern instance{hint}",
                target.span,
            )
        )

    def do_call(self, call: DoCall, scope: Scope) -> None:
        if key(call.block.text) not in self.blocks:
            self.found.append(
                diag.make(
                    "prosescript_undefined_name",
                    f"`do {call.block.text}` names no `block` defined in this script",
                    call.block.span,
                )
            )
        for arg in call.args or ():
            self.expr(arg.value, scope)

    def apply(self, call: Apply, scope: Scope) -> None:
        """`name(args)`: a bound function value, a builtin, a `call` target, else an
        operation left to the render (an info, so a typo is still pointed out)."""
        for arg in call.args:
            self.expr(arg.value, scope)
        name = call.function
        binding = scope.lookup(name.text)
        if binding is not None and binding.kind in (Kind.AGENT, Kind.BLOCK):
            advice = (
                f"an agent, not a function: start it with `session: {name.text}`"
                if binding.kind is Kind.AGENT
                else f"a block: run it with `do {name.text}(…)`"
            )
            self.found.append(
                diag.make("prosescript_unknown_call", f"`{name.text}` is {advice}", name.span)
            )
            return
        if binding is not None:  # a function, slot or delegate held in a variable or alias
            return
        found = builtin(name.text)
        if found is not None:
            self.builtin(call, found)
            return
        if key(name.text) in self.targets or not self.contract.check_calls:
            return
        known = sorted({b.name for b in BUILTINS.values()} | set(self.targets.values()))
        close = _close(name.text, known, n=1, cutoff=0.8)
        hint = f"; did you mean `{close[0]}`?" if close else ""
        self.found.append(
            diag.make(
                "prosescript_render_operation",
                f"`{name.text}(…)` names no builtin, function, slot or binding, so the render "
                f"performs it by judgement{hint} (define a function to pin what it does)",
                name.span,
            )
        )

    def builtin(self, call: Apply, found: Builtin) -> None:
        named = next((arg for arg in call.args if arg.name is not None), None)
        if named is not None or not found.accepts(len(call.args)):
            problem = (
                f"takes no named arguments (`{named.name.text}:`)"
                if named is not None and named.name is not None
                else f"takes {_count(found)}, this call passes {len(call.args)}"
            )
            self.found.append(
                diag.make(
                    "prosescript_builtin_arity",
                    f"`{found.signature()}` {problem}",
                    call.span,
                )
            )
            return
        if found.name != "input" or not isinstance(call.args[0].value, StringLit):
            return
        literal = call.args[0].value
        declared = {key(name): name for name in self.contract.inputs}
        if literal.interpolations or key(literal.value) in declared:
            return
        close = _close(literal.value, sorted(declared.values()), n=1)
        hint = f"; did you mean `{close[0]}`?" if close else ""
        self.found.append(
            diag.make(
                "prosescript_undefined_name",
                f'`input("{literal.value}")` names no declared input of the contract{hint}',
                literal.span,
            )
        )

    def properties(self, props: Iterable[Property], scope: Scope) -> None:
        for prop in props:
            if prop.value is not None:
                self.expr(prop.value, scope, property_key=prop.key.text)
            self.properties(prop.children, scope)

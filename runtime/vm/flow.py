"""The VM's compound values and statements: `parallel`, `repeat`/`for`/`loop`,
pipelines, and `try`/`catch`/`finally`."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..protocol import BindingKind
from .calls import Ask
from .narrate import Event, Recorder
from .program import (
    BreakSignal,
    ContinueSignal,
    Frame,
    ProseError,
    ReturnSignal,
    Scope,
    branch_name,
    cond_text,
    literal,
    message_of,
    replace_path,
    truthy,
)

if TYPE_CHECKING:
    from .interp import Interpreter

__all__ = ["body", "choice", "if_", "loop", "parallel", "pipeline", "try_"]

MAX_OPEN_LOOP = 1000  # an open `loop:` without `(max: N)` stops here


def parallel(
    vm: Interpreter, node: Mapping[str, Any], scope: Scope, frame: Frame, key: str, statement: bool
) -> Any:
    policy = "fail"
    for modifier in node.get("modifiers") or []:
        if modifier.get("key") == "on-fail":
            policy = str(literal(modifier["value"]))
    branches = list(node["body"])
    names = [branch_name(b, i) for i, b in enumerate(branches)]
    vm.record.note(key, {"parallel_id": key, "strategy": policy, "branches": names})
    for index, name in enumerate(names):
        vm.record.note(f"{key}|{index}", {"parallel_id": key, "branch": name})
    scopes = [Scope(scope) for _ in branches]
    recorders = [Recorder() for _ in branches]
    results: list[Any] = [None] * len(branches)
    errors: list[BaseException | None] = [None] * len(branches)

    def run(index: int) -> None:
        inner = Frame(
            function=frame.function,
            path=f"{key}|{index}",
            depth=frame.depth + 1,
            emit=recorders[index],
        )
        try:
            results[index] = vm.statement(branches[index], scopes[index], inner, f"{key}|{index}")
        except BaseException as exc:
            errors[index] = exc

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(branches))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    frame.emit(
        Event(
            kind="parallel",
            depth=frame.depth,
            branches=tuple(
                (names[i], tuple(recorders[i].events), errors[i] is None)
                for i in range(len(branches))
            ),
        )
    )
    for index, inner_scope in enumerate(scopes):
        for name, value in inner_scope.vars.items():
            scope.assign(name, value)
        error = errors[index]
        if error is not None and (policy == "fail" or not isinstance(error, ProseError)):
            raise error
    return {names[i]: results[i] for i in range(len(branches))}


def loop(vm: Interpreter, node: Mapping[str, Any], scope: Scope, frame: Frame, key: str) -> Any:
    t = node["t"]
    kind = node.get("kind", "")
    items: list[Any] | None = None
    limit: int | None = None
    if t == "Repeat":
        limit = _count(vm.value(node["count"], scope, frame, key), node, "repeat")
    elif t == "For" or kind == "for-each":
        items = items_of(vm.value(node["iterable"], scope, frame, key))
        limit = len(items)
    elif node.get("max") is not None:
        limit = _count(vm.value(node["max"], scope, frame, key), node, "max")
    bound = limit if limit is not None else MAX_OPEN_LOOP
    about: dict[str, Any] = {"loop_id": key, "max_iterations": limit, "current_iteration": 0}
    if node.get("condition") is not None:
        about["condition"] = cond_text(node.get("condition"))
    vm.record.note(key, about)
    if t != "Loop" and node.get("parallel"):
        return _parallel_loop(vm, node, scope, frame, key, items, bound)
    out: list[Any] = []
    cond = node.get("condition")
    for i in range(bound):
        if kind == "while" and not vm.decide(cond, scope, frame, f"{key}@{i}?"):
            frame.emit(
                Event(
                    kind="loop-exit",
                    count=i + 1,
                    limit=limit,
                    detail=cond_text(cond),
                    depth=frame.depth,
                )
            )
            break
        frame.emit(Event(kind="loop", count=i + 1, limit=limit, depth=frame.depth))
        at = replace_path(frame, f"{key}@{i}", frame.depth + 1)
        try:
            with _iteration(vm, node, scope, items, key, i) as inner:
                out.append(vm.block(node["body"], inner, at))
        except BreakSignal:
            break
        except ContinueSignal:
            continue
        for name, value in inner.vars.items():
            if scope.find(name) is not None:
                scope.assign(name, value)
        if kind == "until" and vm.decide(cond, scope, frame, f"{key}@{i}?"):
            frame.emit(
                Event(
                    kind="loop-exit",
                    count=i + 1,
                    limit=limit,
                    detail=cond_text(cond),
                    depth=frame.depth,
                )
            )
            break
    return out


@contextmanager
def _iteration(
    vm: Interpreter,
    node: Mapping[str, Any],
    scope: Scope,
    items: list[Any] | None,
    key: str,
    i: int,
    extra: Mapping[str, Any] | None = None,
) -> Iterator[Scope]:
    """Iteration `i`'s scope, in its row (the loop's current_iteration counted)."""
    if not extra:
        vm.record.note(key, {"current_iteration": i + 1})
    with vm.record.row(
        f"{key}@{i}",
        "iteration",
        text=f"iteration {i + 1}",
        line=node.get("line"),
        metadata={"loop_id": key, "iteration": i, **(extra or {})},
    ):
        inner = Scope(scope, frame=f"{key}@{i}")
        _bind_iteration(vm, node, inner, items, i)
        for name, value in inner.vars.items():
            vm.record.bind(f"{key}@{i}", name, BindingKind.LET, value)
        yield inner


def _bind_iteration(
    vm: Interpreter, node: Mapping[str, Any], scope: Scope, items: list[Any] | None, i: int
) -> None:
    if node["t"] == "For":
        names = node["names"]
        scope.define(names[0], items[i] if items is not None else None)
        if len(names) > 1:
            scope.define(names[1], i)
    elif node.get("item") and items is not None:
        scope.define(node["item"], items[i])
    if node.get("alias"):
        scope.define(node["alias"], i + 1)


def _parallel_loop(
    vm: Interpreter,
    node: Mapping[str, Any],
    scope: Scope,
    frame: Frame,
    key: str,
    items: list[Any] | None,
    bound: int,
) -> Any:
    body = node["body"]
    recorders = [Recorder() for _ in range(bound)]
    results: list[Any] = [None] * bound
    errors: list[BaseException | None] = [None] * bound

    vm.record.note(key, {"parallel_id": key, "current_iteration": bound})

    def run(i: int) -> None:
        sub = Frame(
            function=frame.function, path=f"{key}@{i}", depth=frame.depth + 1, emit=recorders[i]
        )
        try:
            with _iteration(vm, node, scope, items, key, i, {"parallel_id": key}) as inner:
                try:
                    results[i] = vm.block(body, inner, sub)
                except ReturnSignal as done:
                    results[i] = done.value
        except BaseException as exc:
            errors[i] = exc

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(bound)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    names = [f"{i + 1}" for i in range(bound)]
    frame.emit(
        Event(
            kind="parallel",
            depth=frame.depth,
            branches=tuple(
                (names[i], tuple(recorders[i].events), errors[i] is None) for i in range(bound)
            ),
        )
    )
    policy = "fail"
    for modifier in node.get("modifiers") or []:
        if modifier.get("key") == "on-fail":
            policy = str(literal(modifier["value"]))
    for error in errors:
        if error is not None and (policy == "fail" or not isinstance(error, ProseError)):
            raise error
    return results


def pipeline(vm: Interpreter, node: Mapping[str, Any], scope: Scope, frame: Frame, key: str) -> Any:
    value = vm.value(node["source"], scope, frame, key)
    for index, op in enumerate(node["ops"]):
        items = items_of(value)
        kind = op["kind"]
        if kind == "reduce":
            acc_name, item_name = (
                (op["names"] + ["acc", "item"])[:2] if len(op["names"]) < 2 else op["names"][:2]
            )
            acc: Any = []
            for i, item in enumerate(items):
                names = {acc_name: acc, item_name: item}
                acc = _item(vm, op, scope, frame, f"{key}|{index}@{i}", names)
            value = acc
            continue
        out = []
        for i, item in enumerate(items):
            result = _item(vm, op, scope, frame, f"{key}|{index}@{i}", {"item": item})
            if kind == "filter":
                if truthy(result):
                    out.append(item)
            else:
                out.append(result)
        value = out
    return value


def _item(
    vm: Interpreter,
    op: Mapping[str, Any],
    scope: Scope,
    frame: Frame,
    key: str,
    names: Mapping[str, Any],
) -> Any:
    """One item of a pipeline stage, in a row of its own (kind `item`)."""
    stage, i = key.rsplit("|", 1)[1].split("@")
    about = {"pipeline_id": key.rsplit("|", 1)[0], "stage": int(stage), "iteration": int(i)}
    text = f"{op['kind']} item {int(i) + 1}"
    try:
        return body(
            vm, op["body"], scope, frame, key, "item", op, text=text, names=names, metadata=about
        )
    except ReturnSignal as done:
        return done.value


def _count(value: Any, node: Mapping[str, Any], what: str) -> int:
    """A loop bound as a whole number (text such as "3" too), else a ProseError."""
    if isinstance(value, bool):
        value = None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or value < 0:
        raise ProseError(
            f"line {node.get('line')}: `{what}` needs a whole number, not {value!r:.40}"
        )
    return value


def items_of(value: Any) -> list[Any]:
    """What a `for` or a pipeline walks: a list as is, an object's values, a text's
    non-empty lines, nothing for null, any other value alone."""
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return list(value)
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, str):
        return [line.strip() for line in value.splitlines() if line.strip()]
    return [value]


def body(
    vm: Interpreter,
    statements: list[Any] | tuple[Any, ...],
    scope: Scope,
    frame: Frame,
    key: str,
    kind: str,
    node: Mapping[str, Any] | None,
    *,
    text: str | None = None,
    depth: int | None = None,
    names: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Any:
    """A nested body (an if/elif/else branch, a choice option, a try, catch or finally
    body, a `do:` block, a pipeline item) as an execution row of its own, its parent
    the statement's row, as seed 004's execution table models blocks: the body's
    bindings (and `names`, defined in it first: a catch's error) are scoped to it, so
    the seed's scope-chain query from a row inside walks up through it."""
    line = node.get("line") if node is not None else None
    path = frame.function.path
    with vm.record.row(key, kind, path=path, line=line, text=text, metadata=metadata):
        inner = Scope(scope, frame=key)
        for name, value in (names or {}).items():
            inner.define(name, value)
            vm.record.bind(key, name, BindingKind.LET, value)
        return vm.block(statements, inner, replace_path(frame, key, depth))


def if_(vm: Interpreter, stmt: Mapping[str, Any], scope: Scope, frame: Frame, key: str) -> Any:
    for index, branch in enumerate(stmt["branches"]):
        if vm.decide(branch["condition"], scope, frame, f"{key}?{index}"):
            vm.record.note(key, {"branch": index})
            return body(vm, branch["body"], scope, frame, f"{key}.{index}", "branch", branch)
    return None


def choice(vm: Interpreter, stmt: Mapping[str, Any], scope: Scope, frame: Frame, key: str) -> Any:
    labels = tuple(option["label"]["value"] for option in stmt["options"])
    question = vm.interpolate(str(stmt["criteria"]["text"]), scope)
    chosen = vm.step(
        frame,
        f"{key}?",
        Ask(
            kind="question",
            target=frame.function.name,
            key=f"{key}?",
            args={},
            question=question,
            options=labels,
        ),
    )
    index = labels.index(chosen)
    vm.record.note(key, {"branch": index, "option": chosen})
    option = stmt["options"][index]
    return body(vm, option["body"], scope, frame, f"{key}.{index}", "branch", option)


def try_(vm: Interpreter, stmt: Mapping[str, Any], scope: Scope, frame: Frame, key: str) -> Any:
    frame.emit(Event(kind="try", depth=frame.depth))
    depth = frame.depth + 1
    try:
        return body(vm, stmt["body"], scope, frame, f"{key}.try", "try", stmt, depth=depth)
    except ProseError as error:
        catch = stmt.get("catch")
        if catch is None:
            raise
        frame.emit(Event(kind="catch", name=catch.get("name") or "", depth=frame.depth))
        vm.record.note(key, {"caught": message_of(error.value)})
        names = {catch["name"]: error.value} if catch.get("name") else {}
        return body(
            vm,
            catch["body"],
            scope,
            frame,
            f"{key}.catch",
            "catch",
            catch,
            depth=depth,
            names=names,
        )
    finally:
        if stmt.get("finally_body") is not None:
            frame.emit(Event(kind="finally", depth=frame.depth))
            body(
                vm,
                stmt["finally_body"],
                scope,
                frame,
                f"{key}.finally",
                "finally",
                None,
                text="finally:",
                depth=depth,
            )

"""The reports of `prosec test`: the text summary (as upstream prints it) and JUnit XML."""

from __future__ import annotations

from collections.abc import Sequence

from prosec.runtime.testing import TestResult

from .errors import fail

__all__ = ["INSTALL_JUNIT", "junit_xml", "require_junit", "result_line", "summary_text"]

INSTALL_JUNIT = "pip install 'prosec[junit]'"
_WIDTH = 36


def result_line(result: TestResult) -> str:
    word = {"pass": "PASS", "fail": "FAIL"}.get(result.status, "ERROR")
    dots = "." * max(3, _WIDTH - len(result.name))
    count = f" ({result.passed}/{result.total})" if result.total else ""
    return f"{result.name} {dots} {word}{count}"


def evidence_lines(result: TestResult) -> list[str]:
    """The indented evidence under a failed or errored test."""
    lines: list[str] = []
    if result.status == "error" and result.error:
        lines.append(f"  ! {result.error}")
    for item in result.assertions:
        if not item.ok:
            lines.append(f"  ✗ {item.text} — {item.observed}")
    if result.status != "pass" and result.run:
        lines.append(f"    report: {result.run}/report.md")
    return lines


def summary_text(results: Sequence[TestResult]) -> str:
    """`Results: N passed, M failed, K errors`, then one line per test with evidence."""
    passed = sum(r.status == "pass" for r in results)
    failed = sum(r.status == "fail" for r in results)
    errors = sum(r.status == "error" for r in results)
    lines = [f"Results: {passed} passed, {failed} failed, {errors} errors", ""]
    for result in results:
        lines.append(result_line(result))
        lines.extend(evidence_lines(result))
    return "\n".join(lines) + "\n"


def require_junit() -> None:
    """Exit 2 with the install command when junitparser (the `junit` extra) is missing."""
    try:
        import junitparser  # noqa: F401
    except ImportError:
        fail(f"--format junit needs the 'junit' extra: {INSTALL_JUNIT}")


def junit_xml(results: Sequence[TestResult]) -> str:
    """One `<testsuite>` per test file's project folder, one `<testcase>` per test
    contract; a failed assertion is a `<failure>`, a test that could not run an `<error>`."""
    try:
        import junitparser
    except ImportError:
        fail(f"--format junit needs the 'junit' extra: {INSTALL_JUNIT}")
    suites: dict[str, junitparser.TestSuite] = {}
    for result in results:
        folder = result.path.rpartition("/")[0] or "."
        suite = suites.setdefault(folder, junitparser.TestSuite(f"prosec test {folder}"))
        case = junitparser.TestCase(
            result.name, classname=result.path, time=round(result.seconds, 3)
        )
        message = "\n".join(evidence_lines(result))
        if result.status == "fail":
            count = f"{result.total - result.passed} of {result.total} assertions failed"
            case.result = [junitparser.Failure(message=count, type_="assertion")]
            case.result[0].text = message
        elif result.status == "error":
            case.result = [junitparser.Error(message=result.error or "the test could not run")]
            case.result[0].text = message
        case.system_out = f"subject: {result.subject}\nrun: {result.run}"
        suite.add_testcase(case)
    document = junitparser.JUnitXml("prosec test")
    for suite in suites.values():
        suite.update_statistics()  # type: ignore[no-untyped-call]
        document.add_testsuite(suite)
    document.update_statistics()  # type: ignore[no-untyped-call]
    data: bytes = document.tostring()  # type: ignore[no-untyped-call]
    return data.decode("utf-8") + "\n"

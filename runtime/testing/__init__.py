"""`prosec test` at run time: run one test plan in a state of its own, evaluate its checks,
write its report. The compiler builds the plan (compiler/passes/tests.py) and its intent
(compiler/codegen/test_plan.py); nothing here imports the compiler."""

from .checks import Outcome, evaluate
from .judge import Judge, JudgeError, Judgements
from .runner import TestResult, run_test

__all__ = ["Judge", "JudgeError", "Judgements", "Outcome", "TestResult", "evaluate", "run_test"]

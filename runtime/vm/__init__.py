"""The VM: runs a program file's functions by interpreting their ProseScript.

`prosec run FILE` compiles the file in memory with a `vm` section (the entry function
and every function of its project, scripts lowered to plain data); `driver` creates the
run, binds the caller inputs and runs `interp` over the script, each step through its
render (`calls`), each completed step in the fsynced `journal`, the narration through
`narrate` (seed 001 markers in vm.log.md, seed 003's in-context lines).
"""

from .driver import (
    VmError,
    VmOutcome,
    VmSettings,
    missing_inputs,
    resume_vm,
    start_vm,
    unknown_inputs,
)

__all__ = [
    "VmError",
    "VmOutcome",
    "VmSettings",
    "missing_inputs",
    "resume_vm",
    "start_vm",
    "unknown_inputs",
]

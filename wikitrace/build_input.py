"""Where a build's runs come from: the input read in this process or, for inputs large enough
to pay for it, in a helper process on the other core; and the build's defaults (its
``--task-type``) applied to each run as it is read."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator

from . import helper_process
from .runs.load import LoadReport, iter_runs
from .runs._common import Carried
from .runs.model import Run
from .runs.read_helper import read_kwargs

if TYPE_CHECKING:
    from .build_options import BuildOptions


def read_runs(opts: BuildOptions, report: LoadReport, known: dict | None = None) -> Iterator[Run | Carried]:
    """The runs of a build, exactly as compiled (the batch pass must see the same prompts)."""
    return apply_defaults(iter_runs(list(opts.inputs), opts.fmt, report, **read_kwargs(opts, known)), opts)


def reader(opts: BuildOptions, known: dict, count_first: bool, llm: bool = False):
    """A helper process reading the input on another core, for inputs large enough
    to pay for starting it (runs/read_helper.py); None: read in this process. On the
    LLM path it also compiles each run offline and renders its prompt (compilers/llm_offline.py)."""
    from .runs import read_helper

    if not read_helper.worth_a_helper(list(opts.inputs)):
        return None
    module, (paths, fmt, count_first, kwargs, each_args) = read_helper.request(opts, known, count_first, llm)
    try:
        return read_helper.RunReader(paths, fmt, count_first, module=module, each_args=each_args, **kwargs)
    except OSError:  # cannot start a process here
        return None


def apply_defaults(runs: Iterable[Run | Carried], opts: BuildOptions) -> Iterator[Run | Carried]:
    for run in runs:
        if isinstance(run, Carried):
            yield run
            continue
        if opts.task_type and not run.task.task_type and not run.task.apps:
            run.task.task_type = opts.task_type
            run.__dict__.pop(helper_process.PICKLED_ATTR, None)  # the reader's bytes no longer match it
        yield run

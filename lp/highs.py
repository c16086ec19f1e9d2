"""HiGHS objects from the LP container: the one place that hands a model to highspy, used by
the solve back-end (:mod:`coflowopt.lp.backends`) and by :meth:`LinearProgram.write
<coflowopt.lp.model.LinearProgram.write>`.  It imports nothing else of the LP layer (the
container comes in as an argument), so the container and the back-ends do not import each
other."""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

__all__ = ["highs_model", "new_highs"]

_BANNER_SILENCED = False


def new_highs() -> Any:
    """A ``highspy.Highs`` object; the one-time version banner HiGHS prints on the C-level
    stdout when the first object is made is sent to /dev/null."""
    global _BANNER_SILENCED
    import highspy

    if _BANNER_SILENCED:
        return highspy.Highs()
    _BANNER_SILENCED = True
    try:
        sys.stdout.flush()
        fd = sys.__stdout__.fileno() if sys.__stdout__ is not None else 1
        saved = os.dup(fd)
    except (OSError, ValueError, AttributeError):
        return highspy.Highs()
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
        return highspy.Highs()
    finally:
        os.dup2(saved, fd)
        os.close(saved)


def highs_model(lp: Any, *, names: bool = False) -> Any:
    """A ``Highs`` object holding ``lp`` (a :class:`~coflowopt.lp.model.LinearProgram`;
    arrays handed over in one call)."""
    import highspy

    h = new_highs()
    h.setOptionValue("output_flag", False)
    inf = highspy.kHighsInf
    A = lp.A

    def clip(a: np.ndarray) -> np.ndarray:
        return np.clip(a, -inf, inf)

    if names:
        hl = highspy.HighsLp()
        hl.num_col_, hl.num_row_ = lp.n_cols, lp.n_rows
        hl.col_cost_ = lp.cost
        hl.col_lower_, hl.col_upper_ = clip(lp.col_lower), clip(lp.col_upper)
        hl.row_lower_, hl.row_upper_ = clip(lp.row_lower), clip(lp.row_upper)
        hl.offset_ = lp.offset
        hl.sense_ = highspy.ObjSense.kMaximize if lp.sense == "max" else highspy.ObjSense.kMinimize
        hl.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
        hl.a_matrix_.num_col_, hl.a_matrix_.num_row_ = lp.n_cols, lp.n_rows
        hl.a_matrix_.start_ = A.indptr.astype(np.int32)
        hl.a_matrix_.index_ = A.indices.astype(np.int32)
        hl.a_matrix_.value_ = A.data
        if lp.is_mip:
            hl.integrality_ = [highspy.HighsVarType.kInteger if b else
                               highspy.HighsVarType.kContinuous for b in lp.integrality]
        hl.col_names_ = lp.col_names()
        hl.row_names_ = lp.row_names()
        status = h.passModel(hl)
    else:
        status = h.passModel(
            lp.n_cols, lp.n_rows, lp.nnz, 2, -1 if lp.sense == "max" else 1, lp.offset,
            lp.cost, clip(lp.col_lower), clip(lp.col_upper), clip(lp.row_lower),
            clip(lp.row_upper), A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data,
            lp.integrality.astype(np.int32),
        )
    if "Error" in str(status):
        raise RuntimeError(f"HiGHS refused the model ({status})")
    return h

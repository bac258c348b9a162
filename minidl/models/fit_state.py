"""Model.fit_state: where training stands, saved inside every model file.

    {"epoch": e, "step": s, "iterator_state": ..., "samples": n, "batch_size": b,
     "shuffle": bool, "steps": k}

means: s steps of epoch e (0-based) are done, on data of n samples in k batches of b
(the batch source's signature) whose order the iterator state (for a data iterator) or
the model's seed (for arrays) fixes. A fit resumes from it only when it starts at epoch
e on data with the same signature; anything else starts the epoch at its first batch.
"""

import warnings


def position(epoch, step, iterator_state, signature):
    return dict(signature, epoch=epoch, step=step, iterator_state=iterator_state)


def _describe(signature):
    order = {True: "shuffled", False: "in order"}.get(signature.get("shuffle"), "in an unknown order")
    return (f"{signature.get('samples', '?')} samples in {signature.get('steps', '?')} batches "
            f"of {signature.get('batch_size', '?')}, {order}")


def resume_point(state, source, initial_epoch, steps, owner):
    """(steps to skip, iterator state to restore) for a fit that starts at initial_epoch
    over `source` with `steps` steps an epoch, given the model's fit_state."""
    state = state or {}
    if state.get("epoch") != initial_epoch:
        return 0, None
    step = int(state.get("step", 0))
    signature = source.signature()
    recorded = {key: state.get(key) for key in signature}
    if recorded == signature and step < steps:
        return step, state.get("iterator_state")
    if step:
        warnings.warn(f"{owner}: the saved position (epoch {initial_epoch + 1}, {step} steps done, "
                      f"on {_describe(recorded)}) does not match this data ({_describe(signature)}, "
                      f"{steps} steps an epoch); epoch {initial_epoch + 1} starts at its first batch",
                      stacklevel=4)   # resume_point < fit < its thread guard < the caller
    return 0, None


def forget_position(model):
    """After a fit that failed inside an epoch: the in-memory position is no saved one, so a
    later fit starts that epoch at its first batch (in the same data order)."""
    if model.fit_state.get("step"):
        model.fit_state = dict(model.fit_state, step=0)

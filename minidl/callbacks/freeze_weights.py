"""FreezeWeights: stop training some weights from a given epoch on (airbench trains its
whitening bias for the first epochs only)."""

import re

from .base import Callback


class FreezeWeights(Callback):
    """From epoch `from_epoch` (0-based) on, the weights whose path ("layer/weight") one of
    the regular expressions var_names matches get learning-rate multiplier 0 (no step, no
    weight decay; the optimizer's learning_rate_multipliers); before it they train as the
    optimizer's other multipliers say. Decided at each epoch's start from the epoch number,
    so a resumed fit freezes the same way."""

    def __init__(self, var_names, from_epoch):
        super().__init__()
        var_names = [var_names] if isinstance(var_names, str) else list(var_names)
        for name in var_names:
            if not isinstance(name, str):
                raise TypeError(f"FreezeWeights: var_names must be strings (regular expressions), got {name!r}")
            re.compile(name)
        if isinstance(from_epoch, bool) or not isinstance(from_epoch, int) or from_epoch < 0:
            raise ValueError(f"FreezeWeights: from_epoch must be an integer >= 0, got {from_epoch!r}")
        self.var_names, self.from_epoch = var_names, from_epoch

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self.model.optimizer
        table = {k: v for k, v in (optimizer.learning_rate_multipliers or {}).items()
                 if k not in self.var_names}
        if epoch >= self.from_epoch:   # first: the first matching expression wins
            table = dict({name: 0.0 for name in self.var_names}, **table)
        optimizer.learning_rate_multipliers = table or None

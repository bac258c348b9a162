"""The one warning a model gives when it runs on a backend other than the active one.

A model's tensors live on the backend it was built on, and it keeps running there after
set_backend() names another (set_backend affects models built afterwards). Moving it silently
would copy every weight and optimizer slot; running on without a word hides that the switch
did not apply to it. So fit / evaluate / predict and the batch methods say it, once per model
and backend pair.
"""

import warnings

from .. import backends


def warn_if_not_on_active_backend(model):
    active = backends._active        # None: no backend chosen yet (nothing to compare with)
    b = model.backend
    if active is None or b is None or active is b:
        return
    key = (id(b), id(active))
    warned = getattr(model, "_backend_warnings", None)
    if warned is None:
        warned = model._backend_warnings = set()
    if key in warned:
        return
    warned.add(key)
    warnings.warn(f"{model.describe()} was built on the {b.name} backend and runs there, not on "
                  f"the active {active.name} backend: set_backend() applies to models built "
                  f"after it. To run it on {active.name}, rebuild it there (e.g. "
                  f"type(model).from_config(model.get_config()), then set_weights(model."
                  f"get_weights()), or save it and load_model it)", RuntimeWarning, stacklevel=4)

"""The executable sections of the backend contract (minidl/backends/base.py's Backend).

Each public method here checks its arguments once (shapes, the scalars' ranges), does the host
arithmetic every backend shares (bias corrections, learning-rate terms), then calls the
backend's implementation: the same name with a leading underscore. A backend implements only
the underscore names and never re-checks what the contract checked; the public names must not
be overridden (tests/test_backend_contract.py enforces it). Checks stay cheap on the hot path:
tuple comparisons, the message built only on failure.

Sections and the module that holds each section's implementation in every backend are listed
in the README ("Backends: the contract's sections").
"""

"""ops.einsum (numpy's / Keras's) as transposes, reshapes, sums and batched matmuls, so that
its gradient is theirs.

The operands are contracted left to right. Before a pair meets, letters that only one operand
has and nothing later needs are summed out; the pair is then laid out as (batch, free,
contracted) and (batch, contracted, free) and multiplied with one matmul. Letters repeated
inside one operand (traces, diagonals) and ellipses of different sizes in one call are
refused with a clear error.
"""

import math
import string

from .core import as_tensor
from .linalg import matmul
from .reductions import sum as reduce_sum
from .shapes import broadcast_to, reshape, transpose


def _parse(subscripts, operands):
    """(input letter strings, output letters) with '...' replaced by letters of its own."""
    if not isinstance(subscripts, str):
        raise TypeError(f"ops.einsum: subscripts must be a str, got {type(subscripts).__name__}")
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"ops.einsum: {subscripts!r} names {len(terms)} operands, got "
                         f"{len(operands)}")
    spare = [c for c in string.ascii_letters if c not in spec]
    ellipsis_rank = None
    for i, (term, t) in enumerate(zip(terms, operands)):
        letters = term.replace("...", "")
        if not all(c in string.ascii_letters for c in letters) or term.count("...") > 1:
            raise ValueError(f"ops.einsum: bad term {term!r} in {subscripts!r}")
        rank = len(t.shape) - len(letters)
        if "..." in term:
            if ellipsis_rank not in (None, rank):
                raise ValueError(f"ops.einsum: the ellipses of {subscripts!r} cover different "
                                 "numbers of axes; give the operands the same rank")
            ellipsis_rank = rank
            term = term.replace("...", "".join(spare[:rank]))
        if len(term) != len(t.shape):
            raise ValueError(f"ops.einsum: term {term!r} has {len(term)} letters, operand {i} "
                             f"has shape {t.shape}")
        if len(set(term)) != len(term):
            raise ValueError(f"ops.einsum: a letter repeated inside one operand ({term!r}: "
                             "a trace or diagonal) is not supported; use ops.diagonal / ops.trace")
        terms[i] = term
    dots = "".join(spare[:ellipsis_rank or 0])
    if arrow:
        output = output.replace("...", dots)
    else:   # implicit mode: the letters used once, in alphabetical order, after the ellipsis
        counts = "".join(terms)
        output = dots + "".join(sorted(c for c in set(counts) if counts.count(c) == 1
                                       and c not in dots))
    if len(set(output)) != len(output) or any(c not in "".join(terms) for c in output):
        raise ValueError(f"ops.einsum: the output of {subscripts!r} names letters that no "
                         "input has, or one twice")
    return terms, output


def einsum(subscripts, *operands):
    """Sum of products over the letters the output does not keep, e.g. "ij,jk->ik"
    (matmul), "bij,bjk->bik", "i,i->" (dot), "ij->ji", "...ij,...jk->...ik"."""
    ts = [as_tensor(t) for t in operands]
    if not ts:
        raise ValueError("ops.einsum: needs at least one operand")
    terms, output = _parse(subscripts, ts)
    sizes = {}
    for term, t in zip(terms, ts):
        for c, n in zip(term, t.shape):
            if sizes.get(c, n) != n and 1 not in (sizes.get(c), n):
                raise ValueError(f"ops.einsum: letter {c!r} of {subscripts!r} has sizes "
                                 f"{sizes[c]} and {n}")
            sizes[c] = max(sizes.get(c, n), n)
    ts = [broadcast_to(t, tuple(sizes[c] for c in term)) for term, t in zip(terms, ts)]
    current, letters = ts[0], terms[0]
    for k in range(1, len(ts)):
        rest = "".join(terms[k + 1:])
        current, letters = _sum_out(current, letters, output + terms[k] + rest)
        other, other_letters = _sum_out(ts[k], terms[k], output + letters + rest)
        current, letters = _contract(current, letters, other, other_letters, output + rest,
                                     sizes)
    current, letters = _sum_out(current, letters, output)
    if letters != output:
        current = transpose(current, [letters.index(c) for c in output])
    return current


def _sum_out(t, letters, needed):
    """t summed over the letters `needed` does not hold."""
    gone = [i for i, c in enumerate(letters) if c not in needed]
    if not gone:
        return t, letters
    return reduce_sum(t, axis=tuple(gone)), "".join(c for c in letters if c in needed)


def _contract(a, la, b, lb, needed, sizes):
    """a * b summed over their shared letters that `needed` does not hold, as one matmul."""
    batch = [c for c in la if c in lb and c in needed]
    summed = [c for c in la if c in lb and c not in needed]
    free_a = [c for c in la if c not in lb]
    free_b = [c for c in lb if c not in la]

    def laid_out(t, letters, order, shape):
        if list(letters) != order:
            t = transpose(t, [letters.index(c) for c in order])
        return reshape(t, shape)

    def count(cs):
        return math.prod(sizes[c] for c in cs)
    left = laid_out(a, la, batch + free_a + summed, (count(batch), count(free_a), count(summed)))
    right = laid_out(b, lb, batch + summed + free_b, (count(batch), count(summed), count(free_b)))
    result = matmul(left, right)
    letters = batch + free_a + free_b
    return reshape(result, tuple(sizes[c] for c in letters)), "".join(letters)

"""The loss of an output with a Keras mask (Embedding(mask_zero=True), Masking, and the layers
that pass a mask on): Keras applies the mask as weights of the output's steps, normalized so
that the batch's loss is the mean over the unmasked steps only:

    loss = sum_t m_t * w * loss_t / (sum_t m_t + 1e-7)     (keras/src/losses/loss.py apply_mask)

that is, each step's weight is m_t * rows / (sum m + 1e-7) in a mean over all rows. Computed on
the backend (no read-back); the same weights scale dL/dpred in backward.

Metrics see the mask as weights of the steps too, not normalized (Keras's MeanMetricWrapper):
the heads of outputs with a mask count every metric as a weighted one (a sum of the hits'
weights over the sum of the weights), so only the unmasked steps count.
"""

EPSILON = 1e-7   # Keras's backend.epsilon(): a batch with every step masked gives loss 0


def output_mask_rows(b, graph, head, n):
    """The mask of `head`'s output as one weight per loss row (n * positions,), or None when
    the output has no mask or its mask does not have one entry per row."""
    masks = graph.output_masks
    mask = masks[head.index] if head.index < len(masks) else None
    if mask is None:
        return None
    rows = n * head.positions
    size = 1
    for d in b.shape(mask):
        size *= d
    return b.reshape(mask, (rows,)) if size == rows else None


def loss_step_weights(b, get, head, mask_rows):
    """mask * rows / (sum(mask) + epsilon), in a buffer of the model's (rows,)."""
    rows = b.shape(mask_rows)[0]
    total = get(("mask_total", head.index), (1,))
    b.reduce(total, mask_rows, "sum")
    b.binary(total, total, EPSILON, "add")
    weights = get(("mask_weights", head.index), (rows,))
    b.binary(weights, mask_rows, total, "divide")
    b.axpby(weights, float(rows), weights, 0.0, weights)
    return weights


def weigh_masked_metrics(graph, heads):
    """At compile: the heads of outputs that have a mask weigh their metrics by it."""
    masked = graph.masked_outputs()
    for h in heads:
        if masked[h.index]:
            h.weighted = True
            for m in h.metrics:
                m.weighted = True


def metric_row_weights(b, get, head, mask_rows, row_weights):
    """The metrics' weight of each row: its mask entry, times its sample weight if any."""
    if row_weights is None:
        return mask_rows
    weights = get(("mask_metric_weights", head.index), b.shape(mask_rows))
    b.multiply(weights, mask_rows, row_weights)
    return weights


def element_weights(b, get, head, row_weights):
    """Each element's weight (its row's), for a metric that counts elements (binary accuracy)."""
    rows, classes = b.shape(row_weights)[0], head.shape[-1]
    weights = get(("mask_element_weights", head.index), (rows, classes))
    b.binary(weights, b.reshape(row_weights, (rows, 1)), 1.0, "multiply")
    return weights

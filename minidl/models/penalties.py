"""Weight regularization and constraints in the training step, all on the backend.

As Keras: the penalty of every regularized weight joins the loss the model minimizes and
reports (in fit and evaluate: the running loss is summed per sample on the device, so a
batch of n samples adds n * positions times its penalty), its gradient joins the weight's
before the optimizer step, and constraints apply to the weights after it.
"""


def plan(graph):
    """(regularized, trainable regularized, constrained): lists of (weight, regularizer or
    constraint) for every weight with one; the last two only for the optimizer's weights."""
    trainable = {id(w) for w in graph.trainable_weights()}
    regularized = [(w, w.regularizer) for layer in graph.layers for w in layer.weights
                   if w.regularizer is not None]
    constrained = [(w, w.constraint) for layer in graph.layers for w in layer.weights
                   if w.constraint is not None and id(w) in trainable]
    return regularized, [(w, r) for w, r in regularized if id(w) in trainable], constrained


def add_penalties(backend, loss_sum, regularized, graph, samples):
    """loss_sum (1,) += samples * the penalty of every regularized weight, and of every layer
    output with an activity regularizer (divided by its batch size, as Keras)."""
    for weight, regularizer in regularized:
        regularizer.penalty(backend, loss_sum, weight.value, float(samples))
    for layer in graph.layers:
        if layer.activity_regularizer is not None and layer.activity_output is not None:
            out = layer.activity_output
            layer.activity_regularizer.penalty(backend, loss_sum, out, samples / backend.shape(out)[0])


def add_penalty_gradients(backend, regularized):
    """Every (trainable) regularized weight's gradient += its penalty's gradient."""
    for weight, regularizer in regularized:
        regularizer.add_gradient(backend, weight.grad, weight.value)


def apply_constraints(backend, constrained):
    for weight, constraint in constrained:
        constraint.apply(backend, weight.value)

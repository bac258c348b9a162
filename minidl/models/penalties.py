"""Weight regularization and constraints in the training step, all on the backend.

As Keras: the penalty of every regularized weight, and of every call node's output with an
activity regularizer, joins the loss the model minimizes and reports (in fit and evaluate:
the model sums them per sample on the device, so a batch of n samples adds n times its
penalty, in a sum of its own that joins the total loss, not an output's loss), its gradient
joins the weight's before the optimizer step (graph.py adds the activity gradients), and
constraints apply to the weights after it. Weights are the graph's primitive layers', so
the layers of nested models count once each, however often they are called.
"""


def plan(graph):
    """(regularized, trainable regularized, constrained): lists of (weight, regularizer or
    constraint) for every weight with one; the last two only for the optimizer's weights."""
    trainable = {id(w) for w in graph.trainable_weights()}
    regularized = [(w, w.regularizer) for w in graph.weights() if w.regularizer is not None]
    constrained = [(w, w.constraint) for w in graph.weights()
                   if w.constraint is not None and id(w) in trainable]
    return regularized, [(w, r) for w, r in regularized if id(w) in trainable], constrained


def add_penalties(backend, penalty_sum, regularized, graph, samples, added=()):
    """penalty_sum (1,) += samples * the penalty of every regularized weight, and of every
    call node's output with an activity regularizer in the last forward (divided by its
    batch size, as Keras), and the losses the layers added (`added`, scalar tensors)."""
    for weight, regularizer in regularized:
        regularizer.penalty(backend, penalty_sum, weight.value, float(samples))
    for regularizer, out in graph.activity_outputs():
        regularizer.penalty(backend, penalty_sum, out, samples / backend.shape(out)[0])
    for value in added:   # the layers' add_loss values: once per batch, as Keras adds them
        backend.axpby(penalty_sum, float(samples), backend.reshape(value, (1,)), 1.0, penalty_sum)


def add_penalty_gradients(backend, regularized, loss_scale=1.0):
    """Every (trainable) regularized weight's gradient += its penalty's gradient (times the
    loss scale of a LossScaleOptimizer)."""
    for weight, regularizer in regularized:
        regularizer.add_gradient(backend, weight.grad, weight.value, loss_scale)


def apply_constraints(backend, constrained):
    for weight, constraint in constrained:
        constraint.apply(backend, weight.value)

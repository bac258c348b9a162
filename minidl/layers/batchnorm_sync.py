"""BatchNormalization(synchronized=True) under minidl.distributed: the batch statistics, and in
backward the two sums the input gradient needs, are taken over every rank's batch.

Forward (x viewed as (M, C) on each rank, M_all rows over the ranks):
    mean = allreduce(sum_rows(x)) / M_all
    var  = allreduce(sum_rows((x - mean)^2)) / M_all       (two passes, as the local kernels)
    out  = batchnorm_forward_infer(x, gamma, beta, mean, var)
Backward, with xhat = (x - mean) / sqrt(var + eps) and dy the rank's own upstream gradient:
    dbeta = sum_rows(dy), dgamma = sum_rows(dy * xhat)          (this rank's share; the
                                                                  DistributedOptimizer averages)
    dx = gamma / sqrt(var + eps) * (dy - (allreduce(dbeta) + xhat * allreduce(dgamma)) / M_all)
which is the global batch's BatchNormalization gradient of the sum of the ranks' losses; the
optimizer's average over ranks then makes the weight gradients those of the global batch.
Only the (C,) sums travel; the arithmetic runs on the backend.
"""

from ..distributed import world


def is_active(layer):
    """Whether `layer` (a BatchNormalization) synchronizes in this training step."""
    return layer.synchronized and world.world_size() > 1


def forward_train(layer, call, out, x2):
    """Normalize x2 (M, C) into out with the statistics of every rank's batch; update the
    moving statistics; keep what backward needs on the call's context."""
    b = layer.backend
    m, c = b.shape(x2)
    total = world.allreduce_count(m)
    sums = call.buffer("sync_sums", (c,))
    centered = call.buffer("sync_centered", (m, c))
    mean, var = call.buffer("mean", (c,)), call.buffer("sync_var", (c,))
    b.bias_grad(sums, x2)
    world.allreduce_sum_tensors(b, [sums])
    b.binary(mean, sums, 1.0 / total, "multiply")
    b.binary(centered, x2, mean, "subtract")
    b.binary(centered, centered, centered, "multiply")
    b.bias_grad(sums, centered)
    world.allreduce_sum_tensors(b, [sums])
    b.binary(var, sums, 1.0 / total, "multiply")
    gamma, beta = layer._affine
    b.batchnorm_forward_infer(out, x2, gamma, beta, mean, var, layer.epsilon)
    momentum = layer.momentum
    b.axpby(layer.moving_mean.value, momentum, layer.moving_mean.value, 1.0 - momentum, mean)
    b.axpby(layer.moving_variance.value, momentum, layer.moving_variance.value, 1.0 - momentum, var)
    call.mean, call.sync_var, call.sync_total = mean, var, total


def backward(layer, call, dx, dout2):
    """dx (M, C) from dout2 (M, C); the call's dgamma and dbeta get this rank's sums."""
    b = layer.backend
    m, c = b.shape(dout2)
    gamma = layer._affine[0]
    dgamma, dbeta = layer.affine_grads(call)
    ones, zeros = call.buffer("sync_ones", (c,)), call.buffer("sync_zeros", (c,))
    b.fill(ones, 1.0)
    b.fill(zeros, 0.0)
    xhat = call.buffer("sync_xhat", (m, c))
    b.batchnorm_forward_infer(xhat, call.x2, ones, zeros, call.mean, call.sync_var, layer.epsilon)
    b.bias_grad(dbeta, dout2)
    b.binary(dx, dout2, xhat, "multiply")
    b.bias_grad(dgamma, dx)
    total_dbeta, total_dgamma = call.buffer("sync_dbeta", (c,)), call.buffer("sync_dgamma", (c,))
    b.copy(total_dbeta, dbeta)
    b.copy(total_dgamma, dgamma)
    world.allreduce_sum_tensors(b, [total_dbeta, total_dgamma])
    scale = 1.0 / call.sync_total
    b.binary(total_dbeta, total_dbeta, scale, "multiply")
    b.binary(total_dgamma, total_dgamma, scale, "multiply")
    b.channel_scale_shift(xhat, xhat, total_dgamma, total_dbeta)   # (xhat * G2 + G1) / M_all
    b.binary(dx, dout2, xhat, "subtract")
    factor = call.buffer("sync_factor", (c,))                      # gamma / sqrt(var + eps)
    b.binary(factor, call.sync_var, float(layer.epsilon), "add")
    b.binary(factor, factor, -0.5, "power")
    b.binary(factor, factor, gamma, "multiply")
    b.channel_scale_shift(dx, dx, factor, zeros)

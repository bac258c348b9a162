/* The table of struct vector_kernels, filled from the static kernels of the including file.
 *
 * Included at the end of each vector_kernels_*.c (the SIMD ones through vector_kernels_impl.h)
 * once every kernel is defined and ISA_NAME names the ISA: one list of kernels,
 * so a new kernel cannot be left out of one ISA's table.
 */
#ifndef MINIDL_VECTOR_KERNELS_TABLE_H
#define MINIDL_VECTOR_KERNELS_TABLE_H

static const struct vector_kernels isa_kernels = {
    .isa = ISA_NAME,
    .add = add,
    .axpby = axpby,
    .multiply = multiply,
    .scale = scale,
    .bias_add = bias_add,
    .activation_forward = activation_forward,
    .activation_backward = activation_backward,
    .softmax_rows = softmax_rows,
    .softmax_backward_rows = softmax_backward_rows,
    .col_sum = col_sum,
    .col_sq_dev = col_sq_dev,
    .col_dot_dev = col_dot_dev,
    .rows_scale_shift = rows_scale_shift,
    .rows_affine2 = rows_affine2,
    .max_update = max_update,
    .dropout_blocks = dropout_blocks,
    .sum = sum,
    .sum_squares = sum_squares,
    .all_finite = all_finite,
    .clip_value = clip_value,
    .sgd = sgd,
    .sgd_momentum = sgd_momentum,
    .adam = adam,
    .rmsprop = rmsprop,
    .adagrad = adagrad,
};

#endif

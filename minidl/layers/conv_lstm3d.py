"""ConvLSTM3D (Keras 3's): ConvLSTM2D's sequence (conv_lstm.py) with Conv3D convolutions."""

from .calls import run_backward, run_forward
from .conv3d import Conv3D
from .conv_lstm import _ConvLSTM


class ConvLSTM3D(_ConvLSTM):
    """Keras ConvLSTM3D: inputs (batch, time, depth, rows, cols, channels); kernel (kd, kh, kw,
    C, 4 filters). Its two convolutions are Conv3D layers sharing this layer's weights (the
    3-D convolution as depth taps of conv2d, conv3d.py), each run on a child of the call's
    context: the input one over the T N volumes, the recurrent one per step (a child per
    step, whose kernel gradients add up). With dropout / recurrent_dropout in training their
    twins with groups=4 run instead, on the inputs tiled per gate (conv_lstm_dropout.py)."""
    rank = 3
    keeps_state_inputs = True   # each step's Conv3D child keeps its input for backward

    def build(self, input_shape):
        super().build(input_shape)
        input_shape = self._sequence_shape(input_shape)
        f = self.filters
        image = self._image_shape(input_shape)[1:]
        state = self._output_image(input_shape) + (f,)
        self._convs = {}
        for groups in (1, 4):
            suffix = "" if groups == 1 else "_dropped"
            x_conv = Conv3D(4 * f, self.kernel_size, self.strides, self.padding,
                            dilation_rate=self.dilation_rate, groups=groups,
                            use_bias=self.use_bias, name=f"{self.name}_input_conv{suffix}")
            h_conv = Conv3D(4 * f, self.kernel_size, padding="same", groups=groups,
                            use_bias=False, name=f"{self.name}_recurrent_conv{suffix}")
            x_conv.kernel, h_conv.kernel = self.kernel, self.recurrent_kernel
            if self.use_bias:
                x_conv.bias = self.bias
            x_conv.input_shape = image[:-1] + (groups * image[-1],)
            h_conv.input_shape = state[:-1] + (groups * f,)
            for conv in (x_conv, h_conv):
                conv.built = True
            self._convs[("input", groups)], self._convs[("state", groups)] = x_conv, h_conv

    def _run_conv(self, call, key, conv, x, training, input_grad_needed):
        conv.backend, conv.trainable = self.backend, self.trainable
        inner = call.child(key, conv)
        inner.input_grad_needed, inner.mask = input_grad_needed, None
        return run_forward(conv, inner, x, training)

    def _input_conv(self, call, x_in, n, steps, training):
        z = self._run_conv(call, "input_conv", self._convs[("input", call.input_groups)], x_in,
                           training, call.input_grad_needed)
        return self.backend.reshape(z, (steps * call.rows, 4 * self.filters))

    def _state_conv(self, call, t, h_in, training):
        rec = self._run_conv(call, ("recurrent_conv", t),
                             self._convs[("state", call.state_groups)], h_in, training, True)
        return self.backend.reshape(rec, (call.rows, 4 * self.filters))

    def _state_conv_backward(self, call, t, dg):
        # the first backward of the recurrent convolution (the last step) sets its kernel's
        # gradient (or adds to it when this call accumulates), the others add to it
        steps = call.x_shape[1]
        conv = self._convs[("state", call.state_groups)]
        inner = call.children[("recurrent_conv", t)]
        shape = (call.x_shape[0],) + tuple(call.out_image) + (4 * self.filters,)
        dh = run_backward(conv, inner, self.backend.reshape(dg, shape),
                          accumulate=call.accumulating or t < steps - 1)
        return self.backend.reshape(dh, (call.rows, self.filters * call.state_groups))

    def _state_kernel_grad(self, call, dgates, n, steps):
        if steps == 1 and call.first_recurrent == 1 and self.trainable:
            # no step ran the recurrent convolution
            self.backend.fill(call.grad(self.recurrent_kernel), 0.0)

    def _input_conv_backward(self, call, dgates):
        inner = call.children["input_conv"]
        shape = (call.x_shape[1] * call.x_shape[0],) + tuple(call.out_image) + (
            4 * self.filters,)
        return run_backward(self._convs[("input", call.input_groups)], inner,
                            self.backend.reshape(dgates, shape), accumulate=call.accumulating)


__all__ = ["ConvLSTM3D"]

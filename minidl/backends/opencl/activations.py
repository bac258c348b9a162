"""The activations section of the contract (contract/activations.py) on kernels/activations.cl
(softmax: the row kernels of loss.cl, or the work-group rows on the gpu profile: profiles.py): a
mixin of OpenCLBackend (backend.py), which provides _run1d and profile. The contract checked
the name (and gives its code, the kernels' number), the shapes and x where it is needed."""


class ActivationOps:
    """Mixin of OpenCLBackend: the activation ops."""

    def _activation_forward(self, out, x, name, code, alpha):
        if name == "softmax":
            k = x.shape[-1]
            self.profile.softmax_forward(out, x, x.size // k, k)
            return
        self._run1d("activations.cl", "activation_forward", out.size, out, x, code, alpha, out.size)

    def _activation_backward(self, dx, dout, y, x, name, code, alpha):
        if name == "softmax":
            k = y.shape[-1]
            self._run1d("loss.cl", "softmax_backward", y.size // k, dx, dout, y, y.size // k, k)
            return
        if x is None:
            x = y    # a valid buffer the kernel never reads
        self._run1d("activations.cl", "activation_backward", dx.size, dx, dout, y, x, code, alpha, dx.size)

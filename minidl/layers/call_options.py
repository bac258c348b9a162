"""Per-call keyword options of a layer (Node.options, LayerCall.options): which names a layer
takes, and how they change its output (ReversibleEmbedding's reverse=, attention's
return_attention_scores=); a mixin of Layer."""

from . import custom_call


class CallOptions:
    # the call keyword arguments a built-in layer takes besides training (attention's
    # use_causal_mask); a layer written with `call` takes those its signature names
    call_options = ()

    def check_call_options(self, options):
        """The call's keyword arguments, checked: names this layer takes, plain values (a
        tensor argument must go in the inputs). Returns a dict (empty when none)."""
        if not options:
            return {}
        if self.uses_call():
            accepted = custom_call.call_parameters(self)
        else:
            accepted = self.call_options
        for name, value in options.items():
            if name == custom_call.TENSOR_ARGUMENTS:
                custom_call.check_tensor_arguments(self, value)
                continue
            if name not in accepted:
                raise TypeError(f"{self.describe()}: unexpected call argument {name!r} "
                                f"(it takes {', '.join(sorted(accepted)) or 'only inputs and training'})")
            if not (value is None or isinstance(value, (bool, int, float, str))):
                raise TypeError(f"{self.describe()}: call argument {name!r} must be a plain value "
                                f"(bool, int, float, str or None) in minidl, got {type(value).__name__}; "
                                "pass tensors in the inputs")
        return dict(options)

    def accept_node_inputs(self, count):
        """A model file feeds this layer's call `count` tensors (a recurrent layer takes its
        initial states after its input); the default takes what the layer was made for."""

    def node_output_has_mask(self, input_masked, options):
        """output_has_mask for one call with its keyword options (a layer whose options change
        what its output is, ReversibleEmbedding's reverse=, overrides it)."""
        return self.output_has_mask(input_masked)

    def options_output_shape(self, input_shape, options):
        """The output shape of a built-in layer's call with these keyword options, when they
        change it (ReversibleEmbedding's reverse=); None: the usual one."""
        return None


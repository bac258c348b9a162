"""Keras 3's variable names for a layer's weights (trainable_variables, non_trainable_variables,
variables): the same Weight objects as trainable_weights, non_trainable_weights and weights."""


class VariableNames:
    """Mixed into Layer (so models have them too)."""

    @property
    def variables(self):
        return self.weights

    @property
    def trainable_variables(self):
        return self.trainable_weights

    @property
    def non_trainable_variables(self):
        return self.non_trainable_weights

"""Model.to_json / keras.models.model_from_json: a model's architecture (no weights) as
Keras 3's JSON, {"module", "class_name", "config", "registered_name"}, and back."""

import json

from ..deserialization import deserialize_keras_object
from ..serialization import serialize_keras_object


def model_to_json(model, **kwargs):
    """The JSON text of serialize_keras_object(model); kwargs go to json.dumps."""
    return json.dumps(serialize_keras_object(model), **kwargs)


def model_from_json(json_string, custom_objects=None):
    """A new model (fresh weights) from Model.to_json()'s text; custom_objects ({name:
    class}) names classes of your own."""
    if not isinstance(json_string, (str, bytes, bytearray)):
        raise TypeError(f"model_from_json: json_string must be a string, got "
                        f"{type(json_string).__name__}")
    try:
        config = json.loads(json_string)
    except json.JSONDecodeError as e:
        raise ValueError(f"model_from_json: the text is not JSON: {e}") from None
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError("model_from_json: expected a JSON object with 'class_name' and "
                         "'config' (what Model.to_json writes)")
    model = deserialize_keras_object(config, custom_objects=custom_objects)
    if not (hasattr(model, "graph") and hasattr(model, "compile")):
        raise ValueError(f"model_from_json: the JSON describes a {type(model).__name__}, "
                         "not a model")
    return model


__all__ = ["model_from_json", "model_to_json"]

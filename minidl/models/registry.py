"""Model classes by name, so that a saved architecture can be rebuilt without the loader
importing the model modules (which import the saver): `register` is applied to each class."""

MODEL_CLASSES = {}


def register(cls):
    """Class decorator: make `cls` loadable under its class name."""
    MODEL_CLASSES[cls.__name__] = cls
    return cls


def model_class(class_name):
    """The registered model class called `class_name` (a ValueError if unknown)."""
    if class_name not in MODEL_CLASSES:
        raise ValueError(f"unknown model class {class_name!r}; known: {sorted(MODEL_CLASSES)}")
    return MODEL_CLASSES[class_name]

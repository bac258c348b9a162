"""serialize / deserialize / get for the small configurable objects (regularizers, constraints):
{"class_name", "config"} dicts whose classes are the built-in ones or found through the
custom-object registry (a file never names code to import)."""

from .custom_objects import get_registered_name, get_registered_object


class ConfigObject:
    """get_config / from_config / repr of a small object rebuilt from its constructor arguments."""

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"{type(self).__name__}({self.get_config()})"


def serialize_object(obj, base, what):
    """{"class_name", "config"} of obj, an instance of base (None stays None)."""
    if obj is None:
        return None
    if not isinstance(obj, base):
        raise TypeError(f"{what}.serialize: expected a {base.__name__}, got {type(obj).__name__}")
    return {"class_name": get_registered_name(obj), "config": obj.get_config()}


def deserialize_object(config, classes, base, what, custom_objects=None):
    """The object a serialize_object() dict describes; classes maps built-in class names."""
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"{what}.deserialize: expected a dict with 'class_name' and 'config', got {config!r}")
    name = config["class_name"]
    cls = classes.get(name) or get_registered_object(name, custom_objects)
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise ValueError(f"{what}.deserialize: unknown {base.__name__} {name!r}; known: {sorted(classes)}")
    return cls.from_config(dict(config.get("config", {})))


def get_object(identifier, by_name, classes, base, what):
    """None, an instance, a name of by_name (built with its Keras defaults) or a dict."""
    if identifier is None or isinstance(identifier, base):
        return identifier
    if isinstance(identifier, str):
        cls = by_name.get(identifier.lower())
        if cls is None:
            raise ValueError(f"{what}.get: unknown {base.__name__} {identifier!r}; known: {sorted(by_name)}")
        return cls()
    if isinstance(identifier, dict):
        return deserialize_object(identifier, classes, base, what)
    raise TypeError(f"{what}.get: cannot interpret {identifier!r} as a {base.__name__}")


def object_functions(base, classes, by_name, what):
    """(serialize, deserialize, get) of a module whose objects derive from base."""
    def serialize(obj):
        """{"class_name", "config"} (None stays None)."""
        return serialize_object(obj, base, what)

    def deserialize(config, custom_objects=None):
        return deserialize_object(config, classes, base, what, custom_objects)

    def get(identifier):
        """From None, an instance, a Keras name (its defaults) or a serialize() dict."""
        return get_object(identifier, by_name, classes, base, what)

    return serialize, deserialize, get

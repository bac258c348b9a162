"""keras.utils.Config: a dict whose entries are attributes too, which can be frozen."""

import json


class Config:
    """Config(a=1).a == Config(a=1)["a"]; freeze() makes it read-only."""

    __frozen = False

    def __init__(self, **kwargs):
        self._config = dict(kwargs)
        self.__frozen = False

    @property
    def frozen(self):
        return self.__frozen

    def freeze(self):
        self.__frozen = True

    def unfreeze(self):
        self.__frozen = False

    def _check_mutable(self):
        if self.__frozen:
            raise ValueError("Cannot mutate attribute(s) because the config is frozen.")

    def __setattr__(self, name, value):
        if name in ("_config", "_Config__frozen"):
            object.__setattr__(self, name, value)
            return
        self._check_mutable()
        self._config[name] = value

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_config",):
            raise AttributeError(name)
        try:
            return self._config[name]
        except KeyError:
            raise AttributeError(f"Unknown attribute: '{name}'") from None

    def __delattr__(self, name):
        self._check_mutable()
        del self._config[name]

    def __setitem__(self, key, value):
        self._check_mutable()
        self._config[key] = value

    def __getitem__(self, key):
        return self._config[key]

    def __delitem__(self, key):
        self._check_mutable()
        del self._config[key]

    def __contains__(self, key):
        return key in self._config

    def __len__(self):
        return len(self._config)

    def __iter__(self):
        return iter(self._config)

    def keys(self):
        return self._config.keys()

    def values(self):
        return self._config.values()

    def items(self):
        return self._config.items()

    def get(self, key, default=None):
        return self._config.get(key, default)

    def update(self, *args, **kwargs):
        self._check_mutable()
        self._config.update(*args, **kwargs)

    def pop(self, *args):
        self._check_mutable()
        return self._config.pop(*args)

    def as_dict(self):
        return dict(self._config)

    def to_json(self):
        return json.dumps(self._config)

    def __repr__(self):
        return f"<Config {self._config}>"


__all__ = ["Config"]

"""What Keras 2.3.1 needs from Python 3.11 and h5py 3, installed before Keras uses it."""
import collections
import collections.abc

for _name in ("Iterable", "Mapping", "MutableMapping", "Sequence", "Container", "Callable"):
    if not hasattr(collections, _name):
        setattr(collections, _name, getattr(collections.abc, _name))

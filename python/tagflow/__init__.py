"""tagflow: time-tag streams into physics results, from Python.

A graph reads one source; measurements and virtual channels hang off it and are built with
the reference software's names and keyword arguments (positional arguments follow the same
order)::

    import tagflow as tf
    graph = tf.Graph(tf.SyntheticSource(duration_ps=10**12))
    herald = tf.DelayedChannel(graph, input_channel=1, delay=1000)
    corr = tf.Correlation(graph, 2, herald, binwidth=10, n_bins=400)
    graph.run()
    g2 = corr.getDataNormalized()

Every value is checked by the same declaration as in C++ (ValueError with the same message);
a file that cannot be opened or written raises OSError, corrupt content ValueError. Results
come back as numpy arrays. The graph runs on its own threads with the GIL released; Ctrl-C
during a blocking call stops the run cleanly and keeps the data. docs/python.md has the whole
API and how to port a script.
"""

import operator
import os
import threading
import time

from . import _tagflow as _core

__version__ = _core.__version__

Graph = _core.Graph
Measurement = _core.Measurement
VirtualChannel = _core.VirtualChannel
Source = _core.Source
measurement_kinds = _core.measurement_kinds
channel_kinds = _core.channel_kinds
source_kinds = _core.source_kinds


def write_hdf5(path, graph, config=""):
    """Writes every measurement of the graph, its virtual channels (with the changes of their
    live settings) and its last profile to `path` (str or path object), in tagflow run's
    layout."""
    _core.write_hdf5(os.fspath(path), graph, config)


def mergeStreamFiles(output, inputs, channel_offsets=(), time_offsets=(), overlap_only=False,
                     max_file_size=1 << 30, compression="none"):
    """Merges tag file recordings of several time taggers into one set at `output`: input k's
    channels shifted by channel_offsets[k] (falling edges away from zero alike) and its times
    by time_offsets[k] ps (empty: all zero), the tags in time order, overflow intervals united;
    overlap_only keeps only the span every input covers. Returns a dict with the tags and
    bytes written and the merged span (begin, end in ps)."""
    return _core.merge_stream_files(os.fspath(output), [os.fspath(path) for path in inputs],
                                    list(channel_offsets), list(time_offsets), overlap_only,
                                    max_file_size, compression)


def _check_owner(kind, graph, name):
    """The graph and name that every node takes, refused with TypeError naming what came."""
    if not isinstance(graph, Graph):
        raise TypeError(f"{kind}(): the first argument must be a tagflow Graph, got "
                        f"{type(graph).__name__}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"{kind}(): name must be a str, got {type(name).__name__} {name!r}")


def _parallel_count(kind, parallel):
    if isinstance(parallel, bool):
        raise TypeError(f"{kind}(): parallel must be an integer (1 to 256), got bool")
    try:
        return operator.index(parallel)
    except TypeError:
        raise TypeError(f"{kind}(): parallel must be an integer (1 to 256), got "
                        f"{type(parallel).__name__} {parallel!r}") from None


def _arguments(kind, keys, numbered, args, kwargs):
    if len(args) > len(keys):
        raise TypeError(f"{kind}() takes at most {len(keys)} positional arguments after the "
                        f"graph ({', '.join(keys)}), {len(args)} given")
    for key, value in zip(keys, args):
        if key in kwargs:
            raise TypeError(f"{kind}() got argument '{key}' twice")
        kwargs[key] = value
    for plural, prefix in numbered.items():
        if plural in kwargs:
            if any(key.startswith(prefix + "_") for key in kwargs):
                raise TypeError(f"{kind}() got both '{plural}' and numbered {prefix}_N "
                                "arguments (valid: one of the two)")
            kwargs.update(_numbered(kind, plural, prefix, kwargs.pop(plural)))
    return kwargs


def _numbered(kind, plural, prefix, lists):
    """groups=[[1, 2], [3, 4]] as group_0=[1, 2], group_1=[3, 4]."""
    def is_list(value):
        return not isinstance(value, (str, bytes)) and hasattr(value, "__len__") and \
            hasattr(value, "__getitem__")
    if not is_list(lists) or not all(is_list(item) for item in lists):
        raise TypeError(f"{kind}() argument '{plural}': expected a list of channel lists, e.g. "
                        f"[[1, 2], [3, 4]], got {lists!r}")
    return {f"{prefix}_{number}": list(item) for number, item in enumerate(lists)}


# What a sharded measurement's object answers itself; every other get...() reads a fresh merge
# of its shards.
_SHARDED_OWN = ("start", "startFor", "stop", "clear", "isRunning", "waitUntilFinished",
                "getCaptureDuration", "getOverflowCount", "getResults", "getPartialState",
                "mergePartialState")
_sharded_views = {}


def _sharded_view(cls):
    """The class of a measurement run as parallel shards: the object keeps its kind's getters,
    which read the shards merged at the moment of the call (a consistent snapshot)."""
    if cls in _sharded_views:
        return _sharded_views[cls]

    def own(name):
        return lambda self, *args, **kwargs: getattr(self._sharded, name)(*args, **kwargs)

    def merged(name):
        return lambda self, *args, **kwargs: getattr(self._sharded.merged(), name)(*args, **kwargs)

    methods = {name: own(name) for name in _SHARDED_OWN}
    for name in dir(cls):
        if name.startswith("get") and name not in methods:
            methods[name] = merged(name)
    methods["parallel"] = property(lambda self: self._sharded.parallel)
    view = type(cls.__name__, (cls,), dict(methods, __module__=__name__, __doc__=cls.__doc__))
    _sharded_views[cls] = view
    return view


def _node_class(base, keys, summary, help_text, numbered, add):
    def __init__(self, graph, *args, name=None, parallel=1, **kwargs):
        _check_owner(base.__name__, graph, name)
        parallel = _parallel_count(base.__name__, parallel)
        name = graph._unique_name(base.__name__, name, add == "_add_measurement")
        kwargs = _arguments(base.__name__, keys, numbered, args, kwargs)
        if parallel != 1 and add != "_add_measurement":
            raise TypeError(f"{base.__name__}() got an unexpected keyword argument 'parallel'")
        if parallel != 1:
            # Before the kind is built: a FileWriter would already have made its file.
            _core.require_splits_by_time(base.__name__)
        base.__init__(self, graph, name, kwargs)
        if parallel == 1:
            getattr(graph, add)(self)
            return
        # N copies on N cores over interleaved chunks of the stream (docs/parallel.md); this
        # object stays the kind's, its counts those of every shard.
        self._sharded = _core.ShardedMeasurement(base.__name__, graph, name, kwargs, parallel)
        self.__class__ = _sharded_view(type(self))
        getattr(graph, add)(self._sharded)

    signature = ", ".join(keys) + (", parallel=1" if add == "_add_measurement" else "")
    doc = f"{summary}\n\n{base.__name__}(graph, {signature}, name=None)\n\n{help_text}"
    for plural, prefix in numbered.items():
        doc += f"\n{plural}=[[...], [...], ...] gives {prefix}_0, {prefix}_1, ... in one list."
    if add == "_add_measurement":
        doc += ("\n\nparallel=N runs it as N shards on N cores (the kinds whose counts are sums: "
                "Countrate, Correlation, HistogramLogBins without gates); N = 1 is one node.")
    attributes = {"__init__": __init__, "__doc__": doc, "__module__": __name__}
    if add == "_add_measurement":
        attributes["parallel"] = property(lambda self: 1, doc="shards it runs as")
    return type(base.__name__, (base,), attributes)


for _kind, (_keys, _summary, _help, _numbered_keys) in _core.measurement_kinds().items():
    globals()[_kind] = _node_class(getattr(_core, _kind), _keys, _summary, _help,
                                   _numbered_keys, "_add_measurement")
for _kind, (_keys, _summary, _help, _numbered_keys) in _core.channel_kinds().items():
    globals()[_kind] = _node_class(getattr(_core, _kind), _keys, _summary, _help,
                                   _numbered_keys, "_add_channel")


class CustomMeasurement(_core.PythonMeasurement):
    """A measurement written in Python. Subclass it and implement ``process(self, tags)``
    (tags: a read-only numpy structured array with fields type, missed_events, channel and
    time, valid during the call only), and optionally ``clear(self)`` and ``results(self)``
    (a dict of numpy arrays). It runs in the graph like any node; the GIL is held only inside
    process(), and its row in graph.profile() shows what it costs."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # A subclass's clear() drops its data; the engine calls it under the measurement's
        # lock (_clear_data). From outside, clear() is the lifecycle's, like every
        # measurement's; inside the engine's call, a clear() that chains to its base's with
        # super().clear() reaches the base's own, not the lifecycle's again (whose lock the
        # engine holds).
        if "clear" in cls.__dict__:
            drop_data = cls.__dict__["clear"]

            def clear(self):
                if getattr(self, "_clearing_thread", None) == threading.get_ident():
                    return drop_data(self)
                return _core.Measurement.clear(self)

            clear.__doc__ = drop_data.__doc__
            cls.clear = clear

    def _clear_data(self):
        if type(self).clear is _core.Measurement.clear:
            return
        self._clearing_thread = threading.get_ident()
        try:
            self.clear()
        finally:
            self._clearing_thread = None

    def __init__(self, graph, name=None):
        # Refused here rather than when the class is made: a base class may leave process() to
        # its subclasses. Unrefused, the first block would fail the run.
        process = type(self).process
        if process is _core.PythonMeasurement.process or not callable(process):
            raise TypeError(f"{type(self).__name__} must define process(self, tags): a "
                            "CustomMeasurement subclass is handed each run of tags there")
        _check_owner(type(self).__name__, graph, name)
        _core.PythonMeasurement.__init__(self, graph._unique_name(type(self).__name__, name, True))
        graph._add_measurement(self)


def _source(kind):
    def make(**kwargs):
        return _core.make_source(kind, kwargs)
    make.__name__ = make.__qualname__ = "".join(part.capitalize() for part in kind.split("_"))
    make.__doc__ = f"A '{kind}' source; keyword arguments are its keys:\n" + \
        _core.source_kinds()[kind][2]
    return make


def SyntheticSource(**kwargs):
    """The deterministic synthetic source. channel=[{"channel": 1, "kind": "poisson",
    "rate": 1e6}, ...] lists the channels (default: the 8-channel demo stream);
    overflow=[{"begin_ps": ..., "end_ps": ...}] injects overflows; seed, block_size,
    duration_ps, start_time_ps, max_block_duration_ps. Like every source but MemorySource, it
    takes input_delays={channel: delay_ps}: the time tagger's setInputDelay()."""
    return _core.make_source("synthetic", kwargs)


def RawFileSource(path, **kwargs):
    """16-byte tag records from a file."""
    return _core.make_source("raw", dict(kwargs, path=path))


def FileReader(path, **kwargs):
    """A tag file (FileWriter, tagflow convert) replayed; speed=1.0 for real time. A list of
    files (recordings that follow each other, such as the sets of one run split by name) is
    read as one stream: their tags in time order, a gap between them a stretch without tags
    (a MergedSource of them, block_size its own, the other keys each file's)."""
    if isinstance(path, (list, tuple)):
        merged = {key: kwargs.pop(key) for key in ("block_size", "input_delays") if key in kwargs}
        return MergedSource([dict(kwargs, kind="tagfile", path=file) for file in path], **merged)
    return _core.make_source("tagfile", dict(kwargs, path=path))


def MergedSource(inputs, **kwargs):
    """Several sources as one stream, such as the recordings of several time taggers: `inputs`
    lists dicts, each a source kind with its keys and an optional channel_offset and
    time_offset_ps, e.g. [{"kind": "tagfile", "path": "a.tags"}, {"kind": "tagfile", "path":
    "b.tags", "channel_offset": 8}]; overlap_only=True keeps only the span every input covers."""
    return _core.make_source("merged", dict(kwargs, input=list(inputs)))


def VendorFile(path, format="auto", **kwargs):
    """A PicoQuant (PTU, .pt2/.pt3/.ht2/.ht3), Becker & Hickl (.spc) or quTAG file."""
    return _core.make_source("file", dict(kwargs, path=path, format=format))


def PhotonHdf5Source(path, **kwargs):
    """A Photon-HDF5 file (T3 files with their nanotimes and a sync channel)."""
    return _core.make_source("photon_hdf5", dict(kwargs, path=path))


def UdpSource(**kwargs):
    """A stream received over UDP in the tagflow wire format (address, port, ...)."""
    return _core.make_source("udp", kwargs)


def MemorySource(times, channels, block_size=16384, begin_time=None, end_time=None):
    """A stream from numpy arrays (or lists) of times (ps, sorted) and channels: integers of
    any dtype, or floats that are whole numbers (1.5 or NaN is refused, not rounded)."""
    return _core.memory_source(times, channels, block_size, begin_time, end_time)


def make_source(kind, **kwargs):
    """Any source kind by name, e.g. make_source("ptu", path=...)."""
    return _core.make_source(kind, kwargs)


Server = _core.Server


def serve(graph, duration_ps=-1, address="127.0.0.1", port=8080, update_hz=10.0, token="",
          web_root="", on_listening=print):
    """Runs `graph` while a web page shows it live (docs/serve.md), like `tagflow serve`.

    `on_listening` gets the page's URL. When the stream ends the page keeps the final results
    until its "Stop run" is pressed or Ctrl-C comes; returns the run's profile. Ctrl-C during
    the run stops it cleanly and raises KeyboardInterrupt after the data is kept.
    """
    server = Server(graph, address=address, port=port, update_hz=update_hz, token=token,
                    web_root=web_root)
    if on_listening is not None:
        on_listening(server.url)
    try:
        profile = graph.run(duration_ps)
    except KeyboardInterrupt:
        server._run_ended(graph)
        raise
    except Exception as error:
        server._run_ended(graph, failed=True, error=str(error))
        raise
    server._run_ended(graph)
    try:
        while not server.stop_requested:
            time.sleep(0.1)
    except KeyboardInterrupt:
        pass  # the run is over: Ctrl-C only ends the showing of its results
    finally:
        del server
    return profile

"""Files minidl writes and reads: crash-safe writes, and zip/npz reads bounded by what is checked.

Every file minidl writes goes through atomic_write. Model files are zips of npz archives;
ZipArchive and NpzArchive read them member by member, after checking each member's name,
flags, compression and size in the archive's directory, so a hostile file can make the
reader allocate no more than the caller allowed before anything is decompressed.
"""

import contextlib
import errno
import hashlib
import io
import os
import re
import tempfile
import time
import zipfile

import numpy as np

# Temporary files are ".<target>.<pid>.<random>.tmp" beside the target: a later save of the
# same target removes those older than this process whose writer is gone (killed mid-write).
_TMP_PATTERN = r"\.{name}\.(\d+)\.[A-Za-z0-9_]+\.tmp"
_STARTED = time.time()
# The temporary adds up to ~22 characters (".", pid, mkstemp's 8, ".tmp") to the target's name;
# a longer name is shortened to its start and a hash, so that a legal 255-character target
# still has a legal temporary.
_TMP_NAME_MAX = 200


def _temporary_stem(name):
    """The part of the target's file name its temporaries carry: the name, or when long its
    first characters and a hash of the whole."""
    if len(name) <= _TMP_NAME_MAX:
        return name
    digest = hashlib.sha1(os.fsencode(name)).hexdigest()[:12]
    return f"{name[:_TMP_NAME_MAX - 13]}~{digest}"


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _process_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temporaries(path):
    """Remove the temporary files a killed atomic_write of `path` left behind."""
    folder, name = os.path.split(os.path.abspath(path))
    pattern = re.compile(_TMP_PATTERN.format(name=re.escape(_temporary_stem(name))))
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            match = pattern.fullmatch(entry.name)
            if not match or int(match.group(1)) == os.getpid():
                continue
            with contextlib.suppress(OSError):
                if entry.stat().st_mtime < _STARTED and not _process_alive(int(match.group(1))):
                    os.unlink(entry.path)


def _mode_for(path):
    """The permissions the new file gets: the existing file's, else what open() would give."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


@contextlib.contextmanager
def atomic_write(path, mode="wb"):
    """Open a temporary file beside `path`; on success flush, fsync and rename it over `path`.

    A reader therefore sees either the old file or the complete new one, never half a file.
    On an exception the temporary file is removed and `path` is left untouched. The new file
    keeps the permissions of the one it replaces. An OSError (a full disk, say) names `path`.
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
        remove_stale_temporaries(path)
        stem = _temporary_stem(os.path.basename(path))
        fd, tmp = tempfile.mkstemp(prefix=f".{stem}.{os.getpid()}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise _naming(exc, path) from None
    try:
        with os.fdopen(fd, mode) as f:
            yield f
            f.flush()
            os.fchmod(f.fileno(), _mode_for(path))  # mkstemp creates the file 0600
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename is None and exc.errno in _WRITE_ERRNOS:
            raise _naming(exc, path) from None
        raise
    # make the rename itself durable
    with contextlib.suppress(OSError):
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


# what a failed write or fsync of the file says; other OSErrors come from the caller's code
_WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS)


def _naming(exc, path):
    """The same OSError naming `path` ("No space left on device" alone does not say where)."""
    return type(exc)(exc.errno, exc.strerror or str(exc), path)


def element_count(shape):
    """The number of elements of `shape`, in Python ints (np.prod wraps around at 2**63)."""
    count = 1
    for d in shape:
        count *= int(d)
    return count


class ArchiveError(ValueError):
    """An archive or one of its members is not what it must be; the message says which."""


_COMPRESSIONS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


def _check_info(info, where):
    if info.flag_bits & 0x1:
        raise ArchiveError(f"{where}: member {info.filename!r} is encrypted")
    if info.compress_type not in _COMPRESSIONS:
        raise ArchiveError(f"{where}: member {info.filename!r} uses compression method "
                           f"{info.compress_type}; only stored and deflated members are read")


def _open_zip(file, where):
    try:
        archive = zipfile.ZipFile(file)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise ArchiveError(f"{where} is not a zip archive: {exc}") from None
    names = [info.filename for info in archive.infolist()]
    if len(set(names)) != len(names):
        archive.close()
        raise ArchiveError(f"{where} names a member more than once")
    return archive


def _read(archive, info, where):
    """The bytes of one member whose size was checked: ZipExtFile stops at info.file_size."""
    try:
        with archive.open(info) as f:
            data = f.read(info.file_size + 1)
    except Exception as exc:  # BadZipFile (CRC), zlib.error, EOFError, OSError, ...
        raise ArchiveError(f"{where}: member {info.filename!r} cannot be read: "
                           f"{type(exc).__name__}: {exc}") from None
    if len(data) != info.file_size:
        raise ArchiveError(f"{where}: member {info.filename!r} holds {len(data)} bytes, its "
                           f"directory entry says {info.file_size}")
    return data


class ZipArchive:
    """A zip whose members are all known by name, each read only up to a size limit."""

    def __init__(self, path, known):
        """`known` lists the member names allowed; any other member is an error."""
        self.where = os.fspath(path)
        self._archive = _open_zip(self.where, self.where)
        self.members = {}
        for info in self._archive.infolist():
            if info.filename not in known:
                self.close()
                raise ArchiveError(f"{self.where}: unknown member {info.filename!r}; a minidl "
                                   f"file holds only {', '.join(known)}")
            _check_info(info, self.where)
            self.members[info.filename] = info

    def size(self, name):
        return self.members[name].file_size

    def read(self, name, limit):
        """The bytes of member `name`, refused unread when its directory entry says > limit."""
        info = self.members[name]
        if info.file_size > limit:
            raise ArchiveError(f"{self.where}: member {name!r} has {info.file_size} bytes, more "
                               f"than the {limit} it can hold here")
        return _read(self._archive, info, self.where)

    def close(self):
        self._archive.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


_NUMBER_KINDS = "biuf"


class NpzArchive:
    """The arrays of an npz (bytes), known by shape and dtype before any is read.

    `entries` maps each key to (shape, dtype); array(key) reads one. Every member must be
    an .npy file whose header declares a plain number dtype and whose size in the zip
    directory is exactly the header plus the data it declares.
    """

    def __init__(self, data, where):
        self.where = where
        self._archive = _open_zip(io.BytesIO(data), where)
        self.entries, self._layout = {}, {}
        for info in self._archive.infolist():  # as many as the caller's size limit allowed
            _check_info(info, where)
            if not info.filename.endswith(".npy"):
                raise ArchiveError(f"{where}: member {info.filename!r} is not an .npy array")
            key = info.filename[:-4]
            shape, dtype, fortran, offset = self._header(info)
            self.entries[key] = (shape, dtype)
            self._layout[key] = (info, fortran, offset)

    def _header(self, info):
        name = f"{self.where}: array {info.filename[:-4]!r}"
        try:
            with self._archive.open(info) as f:
                version = np.lib.format.read_magic(f)
                read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                               else np.lib.format.read_array_header_2_0)
                shape, fortran, dtype = read_header(f)
                offset = f.tell()
        except Exception as exc:  # numpy raises ValueError, SyntaxError, zlib.error, ...
            raise ArchiveError(f"{name} has an unreadable .npy header: {exc}") from None
        if dtype.kind not in _NUMBER_KINDS or dtype.fields is not None or dtype.subdtype:
            raise ArchiveError(f"{name} has dtype {dtype}, expected plain numbers (pickled "
                               "object arrays are never loaded)")
        nbytes = dtype.itemsize * element_count(shape)
        if info.file_size != offset + nbytes:
            raise ArchiveError(f"{name} declares shape {shape} {dtype} ({nbytes} bytes) but its "
                               f"member holds {info.file_size - offset} bytes of data")
        return tuple(shape), dtype, fortran, offset

    def array(self, key):
        info, fortran, offset = self._layout[key]
        shape, dtype = self.entries[key]
        data = _read(self._archive, info, self.where)[offset:]
        return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")


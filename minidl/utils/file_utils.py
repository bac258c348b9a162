"""get_file: download a file once into minidl's cache, check its hash, optionally extract it.

Semantics and arguments follow keras.utils.get_file. The cache is
<MINIDL_HOME>/<cache_subdir> (MINIDL_HOME defaults to ~/.minidl). A download is written to
a temporary file that is renamed into place only once it is complete and its hash matched,
so an interrupted or corrupted download never leaves a file that a later call would trust.
Archives are extracted only inside their target folder (utils/archive_extract.py): a member
or link that would leave it, links in a loop and special files refuse the whole archive
before anything is written, and the folder appears only once extraction is complete.
"""

import hashlib
import http.client
import os
import tarfile
import tempfile
import urllib.parse
import zipfile
from urllib.error import HTTPError, URLError
from urllib.request import urlopen

from .. import settings
from ..io import atomic_write
from .archive_extract import ArchiveRefused, extract_archive


class DownloadError(OSError):
    """A download failed or its hash did not match; nothing was saved."""


def _hasher(algorithm, file_hash):
    if algorithm not in ("auto", "md5", "sha256"):
        raise ValueError(f"get_file: hash_algorithm must be 'auto', 'md5' or 'sha256', "
                         f"got {algorithm!r}")
    # Keras's rule: 'auto' means sha256 for a 64-character hash, md5 otherwise.
    if algorithm == "sha256" or (algorithm == "auto" and file_hash and len(file_hash) == 64):
        return "sha256"
    return "md5"


def file_digest(path, algorithm):
    """The hex digest of the file at `path` ('md5' or 'sha256'), read in 1 MiB chunks."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _cache_folder(cache_dir, cache_subdir):
    base = os.path.expanduser(os.fspath(cache_dir)) if cache_dir is not None \
        else settings.current().home
    try:
        os.makedirs(base, exist_ok=True)
    except OSError:
        pass
    if not os.access(base, os.W_OK):
        # As Keras: an unwritable home falls back to the temporary folder.
        base = os.path.join(tempfile.gettempdir(), ".minidl")
    folder = os.path.join(base, cache_subdir)
    os.makedirs(folder, exist_ok=True)
    return folder


def _download(origin, target, algorithm, file_hash):
    print(f"Downloading data from {origin}")
    try:
        response = urlopen(origin, timeout=60)
    except (URLError, OSError, http.client.HTTPException, ValueError) as exc:
        reason = f"HTTP {exc.code} {exc.reason}" if isinstance(exc, HTTPError) \
            else f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
        raise DownloadError(
            f"get_file: cannot download {origin} ({reason}). Without network access, copy "
            f"the file from a machine that has it to {target}"
            + (f" ({algorithm} {file_hash})" if file_hash else "") + " and call get_file again"
        ) from None
    save_response(response, target, origin, algorithm, file_hash, "get_file")


def save_response(response, target, url, algorithm, expected_hash, what):
    """Stream an open urlopen() response into `target` through atomic_write, hashing it on
    the way. When it stops short of its Content-Length, fails, or its hash differs from
    `expected_hash` (None: not checked), nothing is saved and DownloadError says so,
    starting with `what`."""
    from tqdm import tqdm

    folder = os.path.dirname(os.path.abspath(target))
    received = 0
    with response:
        length = response.headers.get("Content-Length") if response.headers else None
        expected = int(length) if length and length.isdigit() else None
        digest = hashlib.new(algorithm)
        try:
            with atomic_write(target) as f, tqdm(total=expected, unit="B", unit_scale=True,
                                                 desc=f"{what} {os.path.basename(target)}") as bar:
                while chunk := response.read(1 << 20):
                    f.write(chunk)
                    digest.update(chunk)
                    received += len(chunk)
                    bar.update(len(chunk))
                if expected is not None and received != expected:
                    raise DownloadError(f"{what}: the download of {url} stopped after {received} "
                                        f"of {expected} bytes; nothing was saved in {folder}")
                if expected_hash is not None and digest.hexdigest() != expected_hash.lower():
                    raise DownloadError(
                        f"{what}: incomplete or corrupted file: the download of {url} has "
                        f"{algorithm} {digest.hexdigest()}, expected {expected_hash}; nothing "
                        f"was saved in {folder}")
        except DownloadError:
            raise
        except (OSError, http.client.HTTPException) as exc:
            raise DownloadError(
                f"{what}: the download of {url} failed after {received} bytes "
                f"({type(exc).__name__}: {exc}); the partial file was removed, nothing was "
                f"saved in {folder}") from exc


def _extract(archive, folder, archive_format):
    """Extract `archive` into `folder`; False when it is none of the accepted formats."""
    formats = {"auto": ("tar", "zip"), "tar": ("tar",), "zip": ("zip",)}
    if archive_format not in formats:
        raise ValueError(f"get_file: archive_format must be 'auto', 'tar' or 'zip', "
                         f"got {archive_format!r}")
    try:
        return extract_archive(archive, folder, formats[archive_format])
    except ArchiveRefused as exc:
        raise DownloadError(f"get_file: {exc}") from None
    except getattr(tarfile, "FilterError", ()) as exc:   # the data filter's second line
        raise DownloadError(f"get_file: tarfile's data filter refused a member of {archive} "
                            f"({type(exc).__name__}: {exc}); nothing was extracted in {folder}") from None
    except (tarfile.TarError, zipfile.BadZipFile, EOFError) as exc:
        raise DownloadError(f"get_file: {archive} is a damaged archive ({type(exc).__name__}: "
                            f"{exc}); nothing was extracted in {folder}") from None
    except OSError as exc:   # a full disk, or a member tar cannot create (a link over a file)
        raise DownloadError(f"get_file: extracting {archive} failed ({type(exc).__name__}: "
                            f"{exc}); nothing was extracted in {folder}") from exc


def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None,
             cache_subdir="datasets", hash_algorithm="auto", extract=False,
             archive_format="auto", cache_dir=None, force_download=False):
    """The local path of `origin`'s file, downloaded into the cache on first use.

    A cached copy is used when present, unless its hash differs from `file_hash` (or
    `md5_hash`), in which case it is downloaded again. With `extract=True` (or the older
    `untar=True`) a tar or zip archive is extracted beside it and the folder is returned.
    Raises DownloadError naming the URL and the place to copy the file to when offline.
    """
    if origin is None:
        raise ValueError("get_file: origin (the URL of the file to download) is required")
    if not isinstance(origin, str):
        raise TypeError(f"get_file: origin must be a URL string, got {type(origin).__name__}")
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    algorithm = _hasher(hash_algorithm, file_hash)
    folder = _cache_folder(cache_dir, cache_subdir)
    given = fname is not None
    fname = os.fspath(fname) if given else os.path.basename(urllib.parse.urlsplit(origin).path)
    if fname in (".", ".."):
        raise ValueError(f"get_file: fname must name a file, got {fname!r}"
                         + ("" if given else f" (from origin {origin!r})"))
    if not fname:
        raise ValueError(f"get_file: cannot tell the file name from origin {origin!r}; pass fname")
    if os.sep in fname or (os.altsep and os.altsep in fname):
        raise ValueError(f"get_file: fname must be a file name, not a path (use cache_dir for "
                         f"the folder), got {fname!r}")
    extraction_dir = None
    if extract or untar:
        stem = fname[:fname.find(".")] if given and "." in fname else fname
        if given and "." in fname:
            target, extraction_dir = os.path.join(folder, fname), os.path.join(folder, f"{stem}_extracted")
        else:
            target, extraction_dir = os.path.join(folder, f"{fname}_archive"), os.path.join(folder, fname)
    else:
        target = os.path.join(folder, fname)

    download = force_download or not os.path.exists(target)
    if not download and file_hash is not None and file_digest(target, algorithm) != file_hash.lower():
        print(f"A local file was found at {target}, but its {algorithm} does not match "
              f"{file_hash}: downloading it again")
        download = True
    if download:
        _download(origin, target, algorithm, file_hash)
    if extraction_dir is None:
        return target
    if not _extract(target, extraction_dir, "tar" if untar else archive_format):
        raise DownloadError(f"get_file: {target} is not a {'tar' if untar else archive_format} "
                            "archive; nothing was extracted")
    return extraction_dir


__all__ = ["DownloadError", "file_digest", "get_file", "save_response"]

"""Extract a downloaded tar or zip archive into one folder and nowhere else.

Before anything is written, every tar member is placed as tar itself will place it: member
names and hard-link targets from the archive's root, symlink targets from the link's own
folder, each path followed through the links that earlier members will already have
created. A member (or a link) that would reach outside the folder, links in a loop, and
special files (FIFOs, devices) refuse the whole archive. The members are then extracted into
a temporary folder beside the target that takes its place (or whose entries move into an existing
target, as Keras extracts over it) only when extraction is complete, so a failure leaves neither
a partial folder nor anything outside it. Python's own
tarfile "data" filter (3.9.17+ / 3.10.12+ / 3.11.4+) runs as a second line; the check above is
what protects the older Pythons the README supports.
"""

import contextlib
import os
import shutil
import tarfile
import tempfile
import zipfile

from ..io import _umask

# Linux's own limit on symlinks followed while resolving one path (ELOOP).
_MAX_LINK_HOPS = 40


class ArchiveRefused(Exception):
    """The archive holds a member that must not be extracted; the message says which and why."""


class _Link:
    """A symlink member: its target as written in the archive."""

    def __init__(self, target):
        self.target = target


class _PlannedTree:
    """The folder as the members extracted so far will have left it.

    Keys are canonical paths under the folder (tuples of names, links resolved); values are
    "dir", "file" or a _Link. Missing folders count as folders: tar creates them.
    """

    def __init__(self):
        self.nodes = {(): "dir"}

    def resolve(self, path, base=(), follow_last=True):
        """The canonical place of `path` (relative to the canonical folder `base`), following
        links already planned. Raises ArchiveRefused("outside") / ("loop")."""
        if path.startswith("/") or os.path.isabs(path):
            raise ArchiveRefused("outside")
        pending = list(reversed(path.split("/")))   # a stack: next name on top
        current = list(base)
        hops = 0
        while pending:
            name = pending.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if not current:
                    raise ArchiveRefused("outside")
                current.pop()
                continue
            node = self.nodes.get(tuple(current) + (name,))
            if isinstance(node, _Link) and (pending or follow_last):
                hops += 1
                if hops > _MAX_LINK_HOPS:
                    raise ArchiveRefused("loop")
                if node.target.startswith("/") or os.path.isabs(node.target):
                    raise ArchiveRefused("outside")
                # the link's target continues from the link's folder, which is `current`
                pending.extend(reversed(node.target.split("/")))
                continue
            current.append(name)
        return tuple(current)

    def place(self, where, node):
        """Record `node` at canonical `where`; a link replaces what was there, with its content."""
        if isinstance(node, _Link):
            for key in [k for k in self.nodes if k[:len(where)] == where and k != where]:
                del self.nodes[key]
        for depth in range(1, len(where)):
            self.nodes.setdefault(where[:depth], "dir")
        if node == "dir" and self.nodes.get(where) == "file":
            return   # mkdir over a file fails in tar; the file stays
        self.nodes[where] = node


def _refuse(archive, folder, member, reason):
    reasons = {"outside": f"which would be written or point outside {folder}",
               "loop": "whose links form a loop",
               "special": "which is not a regular file, folder or link (a FIFO or device)",
               "name": "whose name is not a path to extract"}
    return ArchiveRefused(f"{archive} holds {member!r}, {reasons[reason]}; nothing was extracted")


def _plan_tar(tar, archive, folder):
    """Check every member of `tar` as tar will extract it; raise ArchiveRefused on the first
    that must not be."""
    tree = _PlannedTree()
    for member in tar.getmembers():
        if not (member.isreg() or member.isdir() or member.issym() or member.islnk()):
            raise _refuse(archive, folder, member.name, "special")
        name = member.name.rstrip("/")
        last = name.rsplit("/", 1)[-1]
        if not member.isdir() and last in ("", ".", ".."):
            raise _refuse(archive, folder, member.name, "name")
        try:
            # tar writes a file or folder through a link at its last name; it replaces a link
            where = tree.resolve(name, follow_last=not (member.issym() or member.islnk()))
            if where == () and not member.isdir():
                raise ArchiveRefused("name")
            if member.issym():
                tree.resolve(member.linkname, base=where[:-1])
                tree.place(where, _Link(member.linkname))
            elif member.islnk():
                tree.resolve(member.linkname)   # hard links name their target from the root
                tree.place(where, "file")
            else:
                tree.place(where, "dir" if member.isdir() else "file")
        except ArchiveRefused as exc:
            raise _refuse(archive, folder, member.name, str(exc)) from None
    # A later link can change where an earlier one leads: every link must still stay inside.
    for where, node in tree.nodes.items():
        if isinstance(node, _Link):
            try:
                tree.resolve(node.target, base=where[:-1])
            except ArchiveRefused as exc:
                raise _refuse(archive, folder, "/".join(where), str(exc)) from None


def _check_zip(z, archive, folder):
    for name in z.namelist():
        parts = name.replace("\\", "/").split("/")
        if name.startswith(("/", "\\")) or ".." in parts or os.path.isabs(name) \
                or (len(name) > 1 and name[1] == ":"):
            raise _refuse(archive, folder, name, "outside")


@contextlib.contextmanager
def _staging(folder):
    """A fresh temporary folder beside `folder`; on success it becomes `folder` or, when that
    exists, its entries move into it (Keras extracts over the folder: what the user keeps there
    stays); on failure it is removed."""
    parent = os.path.dirname(os.path.abspath(folder))
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{os.path.basename(folder)}.", suffix=".extracting",
                               dir=parent)
    try:
        os.chmod(staging, 0o777 & ~_umask())   # mkdtemp makes it 0700; a folder gets the umask's mode
        yield staging
        if os.path.isdir(folder) and not os.path.islink(folder):
            _move_into(staging, folder)
            shutil.rmtree(staging, ignore_errors=True)
        else:
            if os.path.lexists(folder):   # a file or a link where the folder goes: replaced
                os.remove(folder)
            os.rename(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _real_dir(path):
    return os.path.isdir(path) and not os.path.islink(path)


def _move_into(source, target):
    """Move every entry of `source` into the existing folder `target`, each file replaced whole
    (os.replace), folders merged; links are never followed (a link in `target` is replaced,
    not written through)."""
    for name in os.listdir(source):
        src, dst = os.path.join(source, name), os.path.join(target, name)
        if _real_dir(src) and _real_dir(dst):
            _move_into(src, dst)
            continue
        if _real_dir(dst):
            shutil.rmtree(dst)
        os.replace(src, dst)


def extract_archive(archive, folder, kinds):
    """Extract `archive` (one of `kinds`: "tar", "zip") into `folder`, over what is there
    (other files stay). Returns False when it is none of `kinds`; raises ArchiveRefused (nothing written)
    or the tarfile / zipfile / OS error of a damaged archive (nothing left behind)."""
    for kind in kinds:
        if kind == "tar" and tarfile.is_tarfile(archive):
            with tarfile.open(archive) as tar:
                _plan_tar(tar, archive, folder)
                with _staging(folder) as staging:
                    if hasattr(tarfile, "data_filter"):
                        tar.extractall(staging, filter="data")
                    else:
                        tar.extractall(staging)
            return True
        if kind == "zip" and zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as z:
                _check_zip(z, archive, folder)
                with _staging(folder) as staging:
                    z.extractall(staging)
            return True
    return False

"""Defects in file, image and data handling (issue 21, items 1-4, 7, 8, 10-12): crafted archives,
image folders with FIFOs and link loops, oversized and 16-bit images, empty crops, DOT names,
file modes, non-finite augmentation ranges. Whatever could hang runs in a bounded child process."""

import io
import os
import stat
import subprocess
import sys
import tarfile
import textwrap

import numpy as np
import pytest

import minidl
from minidl import settings


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIDL_HOME", str(tmp_path / "home"))
    settings.reload()
    yield tmp_path / "home"
    monkeypatch.undo()
    settings.reload()


def served(tmp_path, name, data):
    path = tmp_path / "server" / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    return path.as_uri()


def crafted_tar(members):
    """A tar.gz of (name, kind, payload) members: kind "file" (payload bytes), "dir",
    "sym" / "hard" (payload the link target) or "fifo"."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, kind, payload in members:
            info = tarfile.TarInfo(name)
            if kind == "file":
                info.size = len(payload)
                tar.addfile(info, io.BytesIO(payload))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE,
                         "fifo": tarfile.FIFOTYPE}[kind]
            if kind == "dir":
                info.mode = 0o755
            if kind in ("sym", "hard"):
                info.linkname = payload
            tar.addfile(info)
    return buf.getvalue()


def listing(folder):
    return sorted(os.path.relpath(os.path.join(root, name), folder)
                  for root, dirs, files in os.walk(folder) for name in dirs + files)


# ---------------------------------------------------------------- 1. tar slip
HOSTILE_ARCHIVES = {
    # a -> ., so a/b is b at the root, a link to the cache folder's parent: b/x lands outside
    "symlink_chain": [("a", "sym", "."), ("a/b", "sym", ".."), ("b/x", "file", b"escaped")],
    # hard-link targets are named from the archive's root, not from the member's folder
    "hard_link": [("x/y/h", "hard", "../victim.txt")],
    # an earlier link changes meaning once a later one exists: s = c/../d/.. is inside
    # while c is missing, outside once c -> .
    "late_link": [("s", "sym", "c/../d/.."), ("c", "sym", "."), ("s/x", "file", b"escaped")],
    "absolute_link": [("l", "sym", "/tmp"), ("l/x", "file", b"escaped")],
    "link_loop": [("p", "sym", "q"), ("q", "sym", "p"), ("p/x", "file", b"x")],
}


@pytest.mark.parametrize("data_filter", [True, False], ids=["with_filter", "without_filter"])
@pytest.mark.parametrize("kind", sorted(HOSTILE_ARCHIVES))
def test_hostile_tar_is_refused_before_anything_is_written(tmp_path, home, monkeypatch, kind,
                                                           data_filter):
    if not data_filter:   # Python 3.9 / 3.10 before 3.9.17 / 3.10.12: no tarfile "data" filter
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    victim = home / "datasets" / "victim.txt"   # what the hard link's ../victim.txt names
    victim.parent.mkdir(parents=True)
    victim.write_bytes(b"keep")
    before = listing(tmp_path)
    members = [("ok.txt", "file", b"fine")] + HOSTILE_ARCHIVES[kind]
    origin = served(tmp_path, f"{kind}.tar.gz", crafted_tar(members))
    with pytest.raises(minidl.utils.DownloadError, match="outside|loop") as info:
        minidl.utils.get_file(f"{kind}.tar.gz", origin, extract=True)
    assert f"{kind}.tar.gz" in str(info.value) and "nothing was extracted" in str(info.value)
    # no folder, no temporary, nothing beside the archive
    assert sorted(os.listdir(home / "datasets")) == sorted([f"{kind}.tar.gz", "victim.txt"])
    outside = (os.path.join("home", "datasets", ""), "server")
    assert [p for p in listing(tmp_path) if not p.startswith(outside)] == \
        [p for p in before if not p.startswith(outside)]
    assert victim.read_bytes() == b"keep" and os.stat(victim).st_nlink == 1


def test_fifo_member_is_refused_with_nothing_extracted(tmp_path, home):
    members = [("a.txt", "file", b"A"), ("pipe", "fifo", None), ("z.txt", "file", b"Z")]
    origin = served(tmp_path, "fifo.tar.gz", crafted_tar(members))
    with pytest.raises(minidl.utils.DownloadError, match="FIFO"):
        minidl.utils.get_file("fifo.tar.gz", origin, extract=True)
    assert os.listdir(home / "datasets") == ["fifo.tar.gz"]   # no folder, no temporary


def test_a_benign_tar_with_links_extracts_over_the_old_folder(tmp_path, home):
    members = [("d", "dir", None), ("d/a.txt", "file", b"A"), ("latest", "sym", "d"),
               ("d/e", "sym", "../d"), ("h.txt", "hard", "d/a.txt"), ("latest/b.txt", "file", b"B")]
    origin = served(tmp_path, "pack.tar.gz", crafted_tar(members))
    folder = minidl.utils.get_file("pack.tar.gz", origin, extract=True)
    assert open(os.path.join(folder, "h.txt"), "rb").read() == b"A"
    assert open(os.path.join(folder, "d", "b.txt"), "rb").read() == b"B"
    # as Keras, a second extraction writes over the folder: the archive's files are restored,
    # a file the user put there stays
    (home / "datasets" / "pack_extracted" / "mine.txt").write_bytes(b"kept")
    os.remove(os.path.join(folder, "d", "a.txt"))
    (home / "datasets" / "pack_extracted" / "d" / "a.txt").write_bytes(b"edited")
    folder = minidl.utils.get_file("pack.tar.gz", origin, extract=True)
    assert open(os.path.join(folder, "mine.txt"), "rb").read() == b"kept"
    assert open(os.path.join(folder, "d", "a.txt"), "rb").read() == b"A"
    assert os.path.islink(os.path.join(folder, "latest"))
    assert sorted(os.listdir(home / "datasets")) == ["pack.tar.gz", "pack_extracted"]
    mode = stat.S_IMODE(os.stat(folder).st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o777 & ~umask


def test_a_tar_that_fails_midway_leaves_nothing_behind(tmp_path, home):
    members = [("a.txt", "file", b"A"), ("d", "dir", None), ("d", "file", b"a file over a folder")]
    origin = served(tmp_path, "broken.tar.gz", crafted_tar(members))
    with pytest.raises(minidl.utils.DownloadError, match="broken.tar.gz.*nothing was extracted"):
        minidl.utils.get_file("broken.tar.gz", origin, extract=True)
    assert os.listdir(home / "datasets") == ["broken.tar.gz"]


def test_zip_archives_extract_through_a_temporary_folder_too(tmp_path, home):
    import zipfile

    def zip_bytes(names):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            for name in names:
                z.writestr(name, b"z")
        return buf.getvalue()
    folder = minidl.utils.get_file("ok.zip", served(tmp_path, "ok.zip", zip_bytes(["d/a.txt"])),
                                   extract=True)
    assert open(os.path.join(folder, "d", "a.txt"), "rb").read() == b"z"
    with pytest.raises(minidl.utils.DownloadError, match=r"evil\.zip holds '\.\./x\.txt'.*outside"):
        minidl.utils.get_file("evil.zip", served(tmp_path, "evil.zip", zip_bytes(["a", "../x.txt"])),
                              extract=True)
    assert sorted(os.listdir(home / "datasets")) == ["evil.zip", "ok.zip", "ok_extracted"]


@pytest.mark.parametrize("fname, origin", [(".", "http://127.0.0.1:9/x"),
                                           ("..", "http://127.0.0.1:9/x"),
                                           (None, "http://127.0.0.1:9/data/.."),
                                           (None, "http://127.0.0.1:9/data/.")])
def test_get_file_refuses_dot_names(home, fname, origin):
    with pytest.raises(ValueError, match="fname"):
        minidl.utils.get_file(fname, origin, extract=True)


# ---------------------------------------------------------------- 2. empty crops and images
@pytest.mark.parametrize("op", ["image_transform_forward", "image_transform_backward"])
@pytest.mark.parametrize("x_hw, out_hw", [((0, 0), (4, 4)), ((10, 10), (0, 10)), ((1, 0), (2, 2))])
def test_image_transform_refuses_empty_images_on_every_backend(backend, op, x_hw, out_hw):
    big = np.zeros((2,) + x_hw + (3,), np.float32)
    small = np.zeros((2,) + out_hw + (3,), np.float32)
    transforms = backend.from_numpy(np.asarray([[1, 0, 0, 0, 1, 0, 0, 0]], np.float32))
    args = (backend.from_numpy(small), backend.from_numpy(big), transforms, "bilinear", "nearest")
    with pytest.raises(ValueError, match=r"at least 1 row and 1 column.*\(2, "):
        if op.endswith("forward"):
            backend.image_transform_forward(*args, 0.0)
        else:
            # the backward writes dx (the input's shape) from dout (the output's)
            backend.image_transform_backward(backend.from_numpy(big), backend.from_numpy(small),
                                             transforms, "bilinear", "nearest")


def test_c_image_transform_returns_invalid_size_for_empty_images():
    from minidl.backends.cpu._ffi import ffi, lib
    out = np.full((1, 4, 4, 3), 7.0, np.float32)
    x = np.zeros((1, 1, 1, 3), np.float32)
    t = np.asarray([[1, 0, 0, 0, 1, 0, 0, 0]], np.float32)
    ptr = lambda a: ffi.from_buffer("float[]", a)   # noqa: E731
    for h, w, oh, ow in [(0, 1, 4, 4), (1, 0, 4, 4), (1, 1, 0, 4), (1, 1, 4, 0)]:
        assert lib.minidl_image_transform_forward(ptr(out), ptr(x), ptr(t), 1, 1, 0.0,
                                                  1, h, w, 3, oh, ow, 1) == lib.MINIDL_INVALID_SIZE
        assert lib.minidl_image_transform_backward(ptr(x), ptr(out), ptr(t), 1, 1,
                                                   1, h, w, 3, oh, ow, 1) == lib.MINIDL_INVALID_SIZE
    assert (out == 7.0).all()   # nothing written
    assert lib.minidl_image_transform_forward(ptr(out), ptr(x), ptr(t), 1, 1, 0.0,
                                              1, 1, 1, 3, 4, 4, 1) == lib.MINIDL_OK


@pytest.mark.parametrize("op", ["global_avg_pool_forward", "global_avg_pool_backward"])
def test_global_avg_pool_refuses_images_without_pixels(backend, op):
    x = backend.from_numpy(np.zeros((2, 0, 5, 3), np.float32))
    pooled = backend.from_numpy(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"at least 1 pixel.*\(2, 0, 5, 3\)"):
        if op.endswith("forward"):
            backend.global_avg_pool_forward(pooled, x)
        else:
            backend.global_avg_pool_backward(x, pooled)


@pytest.fixture(params=minidl.available_backends())
def active_backend(request):
    minidl.set_backend(request.param)
    yield request.param
    minidl.set_backend("numpy")


def test_crop_to_aspect_ratio_keeps_one_row_as_keras(active_backend):
    # Keras 3.15 (torch): Resizing(1, 100, crop_to_aspect_ratio=True) of this image is a
    # 1x10 crop (rows 4) stretched to 100 columns: the first three values 120, 120, 120
    x = np.arange(300, dtype=np.float32).reshape(1, 10, 10, 3)
    model = minidl.Sequential([minidl.layers.Input((10, 10, 3)),
                               minidl.layers.Resizing(1, 100, crop_to_aspect_ratio=True)])
    y = model.predict(x, verbose=0)
    assert y.shape == (1, 1, 100, 3)
    np.testing.assert_allclose(y[0, 0, :3, 0], [120, 120, 120])
    np.testing.assert_allclose(y[0, 0, -1], x[0, 4, 9])


@pytest.mark.parametrize("layer", ["Resizing", "CenterCrop", "GlobalAveragePooling2D"])
def test_layers_refuse_images_without_pixels(active_backend, layer):
    made = getattr(minidl.layers, layer)(*(() if layer.startswith("Global") else (4, 4)))
    model = minidl.Sequential([minidl.layers.Input((None, None, 3)), made])
    with pytest.raises(ValueError, match=rf"{layer} '.*0x0"):
        model.predict(np.zeros((1, 0, 0, 3), np.float32), verbose=0)


def test_image_dataset_crop_to_a_thin_aspect_ratio_reads_inside_the_image(tmp_path):
    pytest.importorskip("PIL")
    from PIL import Image
    (tmp_path / "c").mkdir()
    pixels = np.arange(300, dtype=np.uint8).reshape(10, 10, 3)
    Image.fromarray(pixels).save(tmp_path / "c" / "i.png")
    ds = minidl.utils.image_dataset_from_directory(tmp_path, image_size=(1, 100), verbose=False,
                                                   crop_to_aspect_ratio=True, shuffle=False)
    (x, _), = [(x.copy(), y) for x, y in ds]
    assert x.shape == (1, 1, 100, 3)
    # row 4 (Keras's centred 1x10 crop) stretched to 100 columns: nothing from outside it
    row = pixels[4].astype(np.float32)
    assert row.min() <= x.min() and x.max() <= row.max()
    np.testing.assert_array_equal(x[0, 0, [0, -1]], row[[0, -1]])


# ---------------------------------------------------------------- 3. hangs in image folders
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_bounded(code, timeout=60):
    """Run `code` in a child Python (this checkout's minidl); fail instead of hanging."""
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""),
               MINIDL_BACKEND="numpy")
    try:
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child process hung (killed after {timeout} s)")
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def write_png(path, pixels):
    pytest.importorskip("PIL")
    from PIL import Image
    Image.fromarray(pixels).save(path)


@pytest.fixture
def two_classes(tmp_path):
    for name, value in (("a", 10), ("b", 200)):
        (tmp_path / name).mkdir()
        write_png(tmp_path / name / "1.png", np.full((4, 4, 3), value, np.uint8))
    return tmp_path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_a_fifo_named_like_an_image_is_skipped_not_waited_on(two_classes):
    os.mkfifo(two_classes / "a" / "x.png")
    out = run_bounded(f"""
        from minidl.utils import image_dataset_from_directory, load_img
        ds = image_dataset_from_directory({str(two_classes)!r}, image_size=(4, 4), verbose=False)
        print(len(ds.file_paths))
        try:
            load_img({str(two_classes / "a" / "x.png")!r})
        except ValueError as exc:
            print("refused:", exc)
    """)
    assert out.splitlines()[0] == "2"
    assert "refused:" in out and "x.png" in out and "not a regular file" in out


def test_follow_links_with_a_link_loop_reads_each_image_once(two_classes):
    os.symlink("..", two_classes / "a" / "up")             # a loop back to the top folder
    os.symlink("../b", two_classes / "a" / "to_b")         # another class's folder
    (two_classes / "b" / "deep").mkdir()
    os.symlink("../deep", two_classes / "b" / "deep" / "self")
    out = run_bounded(f"""
        import numpy as np
        from minidl.utils import image_dataset_from_directory
        ds = image_dataset_from_directory({str(two_classes)!r}, image_size=(4, 4), shuffle=False,
                                          follow_links=True, verbose=False)
        (x, y), = [(x.copy(), y.copy()) for x, y in ds]
        print(len(ds.file_paths), y.tolist(), [int(v) for v in x[:, 0, 0, 0]])
        ds = image_dataset_from_directory({str(two_classes)!r}, labels=None, image_size=(4, 4),
                                          follow_links=True, verbose=False)
        print(len(ds.file_paths))
    """)
    assert out.splitlines() == ["2 [0, 1] [10, 200]", "2"]


# ---------------------------------------------------------------- 4. decompression bombs
def png_header_only(width, height):
    """A PNG whose header claims width x height grayscale pixels, with one tiny IDAT: what a
    hostile file costs to make, a few dozen bytes."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + \
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64))
            + chunk(b"IEND", b""))


@pytest.mark.parametrize("side", [12000, 30000])   # under / over twice Pillow's own limit
def test_huge_image_headers_are_refused_before_decoding(tmp_path, monkeypatch, side):
    pytest.importorskip("PIL")
    from PIL import ImageFile
    (tmp_path / "c").mkdir()
    bomb = tmp_path / "c" / "bomb.png"
    bomb.write_bytes(png_header_only(side, side))

    def decoding(self):   # decoding 12000 x 12000 would allocate the whole image first
        raise AssertionError("the image was decoded")
    monkeypatch.setattr(ImageFile.ImageFile, "load", decoding)
    with pytest.raises(ValueError, match=rf"load_img.*bomb\.png.*({side}x{side}|MAX_IMAGE_PIXELS)"):
        minidl.utils.load_img(bomb)
    with pytest.raises(ValueError, match=r"image_dataset_from_directory.*bomb\.png"):
        minidl.utils.image_dataset_from_directory(tmp_path, image_size=(4, 4), verbose=False)


def test_the_pixel_limit_is_settable(tmp_path):
    write_png(tmp_path / "small.png", np.zeros((10, 10, 3), np.uint8))
    assert minidl.utils.max_image_pixels() == 89_478_485
    try:
        minidl.utils.set_max_image_pixels(99)
        with pytest.raises(ValueError, match=r"small\.png.*10x10.*99.*set_max_image_pixels"):
            minidl.utils.load_img(tmp_path / "small.png")
        minidl.utils.set_max_image_pixels(100)
        assert minidl.utils.load_img(tmp_path / "small.png").size == (10, 10)
        with pytest.raises(ValueError, match="set_max_image_pixels"):
            minidl.utils.set_max_image_pixels(0)
    finally:
        minidl.utils.set_max_image_pixels(89_478_485)


def test_a_damaged_image_error_names_the_file(tmp_path):
    pytest.importorskip("PIL")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n not really")
    with pytest.raises(ValueError, match=r"broken\.png"):
        minidl.utils.load_img(tmp_path / "c" / "broken.png")
    with pytest.raises(ValueError, match=r"broken\.png"):
        minidl.utils.image_dataset_from_directory(tmp_path, image_size=(4, 4), verbose=False)


# ---------------------------------------------------------------- 7. 16-bit PNGs
@pytest.mark.parametrize("color_mode, channels", [("grayscale", 1), ("rgb", 3), ("rgba", 4)])
def test_sixteen_bit_pngs_are_scaled_not_clipped(tmp_path, color_mode, channels):
    (tmp_path / "c").mkdir()
    write_png(tmp_path / "c" / "deep.png", np.array([[32768, 1000], [65535, 0]], np.uint16))
    ds = minidl.utils.image_dataset_from_directory(tmp_path, image_size=(2, 2), color_mode=color_mode,
                                                   shuffle=False, verbose=False)
    (x, _), = [(x.copy(), y) for x, y in ds]
    # TensorFlow's decode_image (Keras's image_dataset_from_directory): value / 256
    np.testing.assert_array_equal(x[0, :, :, 0], [[128, 3], [255, 0]])
    assert x.shape[-1] == channels
    img = minidl.utils.load_img(tmp_path / "c" / "deep.png", color_mode=color_mode)
    values = minidl.utils.img_to_array(img)[:, :, 0]
    # Keras's load_img keeps 16-bit grayscale as it is; rgb/rgba are scaled (Keras clips to 255)
    expected = [[32768, 1000], [65535, 0]] if color_mode == "grayscale" else [[128, 3], [255, 0]]
    np.testing.assert_array_equal(values, expected)


# ---------------------------------------------------------------- 8. labels and batch sizes
def test_listed_labels_must_be_class_indices(two_classes):
    with pytest.raises(ValueError, match=r"labels.*0\.\.65535.*-1"):
        minidl.utils.image_dataset_from_directory(two_classes, labels=[0, -1], label_mode="categorical",
                                                  image_size=(4, 4), verbose=False)
    with pytest.raises(ValueError, match=r"labels.*2147483647"):
        minidl.utils.image_dataset_from_directory(two_classes, labels=[0, 2**31 - 1],
                                                  image_size=(4, 4), verbose=False)
    ds = minidl.utils.image_dataset_from_directory(two_classes, labels=[0, 3], label_mode="categorical",
                                                   image_size=(4, 4), shuffle=False, verbose=False)
    assert ds.class_names == ["0", "1", "2", "3"]
    (_, y), = [(x, y.copy()) for x, y in ds]
    np.testing.assert_array_equal(y, [[1, 0, 0, 0], [0, 0, 0, 1]])


def test_a_huge_batch_size_allocates_for_the_samples_only(two_classes):
    import tracemalloc
    ds = minidl.utils.image_dataset_from_directory(two_classes, batch_size=10**9, image_size=(16, 16),
                                                   shuffle=False, verbose=False)
    tracemalloc.start()
    try:
        (x, y), = [(x.copy(), y.copy()) for x, y in ds]
        assert tracemalloc.get_traced_memory()[1] < 1 << 20
    finally:
        tracemalloc.stop()
    assert x.shape == (2, 16, 16, 3) and list(y) == [0, 1]


# ---------------------------------------------------------------- 11. save_img's file mode
def test_save_img_keeps_the_umask_mode_and_the_replaced_files_mode(tmp_path):
    pytest.importorskip("PIL")
    pixels = np.zeros((4, 4, 3), np.uint8)
    old = os.umask(0o022)
    try:
        minidl.utils.save_img(tmp_path / "new.png", pixels)
        assert stat.S_IMODE(os.stat(tmp_path / "new.png").st_mode) == 0o644
        (tmp_path / "kept.png").write_bytes(b"")
        os.chmod(tmp_path / "kept.png", 0o640)
        minidl.utils.save_img(tmp_path / "kept.png", pixels)
        assert stat.S_IMODE(os.stat(tmp_path / "kept.png").st_mode) == 0o640
        assert minidl.utils.load_img(tmp_path / "kept.png").size == (4, 4)
        assert sorted(os.listdir(tmp_path)) == ["kept.png", "new.png"]
    finally:
        os.umask(old)


# ---------------------------------------------------------------- 10. DOT ids and labels
@pytest.mark.filterwarnings("ignore:.*deprecated")   # pyparsing's, inside pydot's DOT parser
@pytest.mark.parametrize("subgraph", [False, True])
def test_model_to_dot_names_nodes_by_id_and_escapes_labels(subgraph):
    pydot = pytest.importorskip("pydot")
    minidl.set_backend("numpy")
    names = ['a"b', "a:b", "a:c", "x\\", "<b>&amp;</b>"]
    inp = minidl.layers.Input((4,), name="in\\")
    x = inp
    for name in names:
        x = minidl.layers.Dense(4, name=name)(x)
    model = minidl.Model(inp, x, name='m"\\')
    text = minidl.utils.model_to_dot(model, show_shapes=True, subgraph=subgraph).to_string()
    graph = pydot.graph_from_dot_data(text if not subgraph else "digraph G {" + text + "}")[0]
    if subgraph:
        graph = graph.get_subgraphs()[0]
    nodes = [n for n in graph.get_nodes() if n.get_name() not in ("node", "edge", "graph")]
    assert len(nodes) == 6 and len(graph.get_edges()) == 5   # no node merged, no edge lost
    chain = [str(id(layer)) for layer in model.graph.layers]
    assert sorted((e.get_source(), e.get_destination()) for e in graph.get_edges()) == \
        sorted(zip(chain[:-1], chain[1:]))
    for name in ['a&quot;b', "a:b", "a:c", "x\\", "&lt;b&gt;&amp;amp;&lt;/b&gt;", "in\\"]:
        assert f"<b>{name}</b> (" in text


# ---------------------------------------------------------------- 12. non-finite augmentation ranges
@pytest.mark.parametrize("kwargs, name", [
    ({"rotation_range": float("inf")}, "rotation_range"),
    ({"width_shift_range": float("inf")}, "width_shift_range"),
    ({"height_shift_range": float("nan")}, "height_shift_range"),
    ({"shear_range": float("inf")}, "shear_range"),
    ({"zoom_range": float("inf")}, "zoom_range"),
    ({"zoom_range": (0.5, float("inf"))}, "zoom_range"),
    ({"channel_shift_range": float("inf")}, "channel_shift_range"),
    ({"brightness_range": (float("nan"), float("nan"))}, "brightness_range"),
    ({"brightness_range": (0.5, float("inf"))}, "brightness_range"),
    ({"rescale": float("nan")}, "rescale"),
    ({"rescale": float("inf")}, "rescale"),
    ({"zca_epsilon": float("inf")}, "zca_epsilon"),
])
def test_image_data_generator_refuses_non_finite_ranges(kwargs, name):
    from minidl.preprocessing.image import ImageDataGenerator
    with pytest.raises(ValueError, match=rf"ImageDataGenerator: {name} must be .*finite"):
        ImageDataGenerator(**kwargs)


def test_image_data_generator_still_takes_finite_ranges():
    from minidl.preprocessing.image import ImageDataGenerator
    generator = ImageDataGenerator(rotation_range=10, zoom_range=(0.9, 1.1), rescale=1 / 255,
                                   brightness_range=(0.5, 1.5))
    assert generator.rescale == pytest.approx(1 / 255) and generator.zoom_range == (0.9, 1.1)
    assert ImageDataGenerator(rescale=0).rescale is None

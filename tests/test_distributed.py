"""minidl.distributed under `mpirun -np 2` (tests/_distributed_ranks.py runs the ranks), and
its pieces that need no MPI job. Skipped where mpirun or mpi4py is missing."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import minidl.distributed as hvd

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

try:
    import mpi4py  # noqa: F401
    HAVE_MPI4PY = True
except ImportError:
    HAVE_MPI4PY = False
needs_mpi = pytest.mark.skipif(shutil.which("mpirun") is None or not HAVE_MPI4PY,
                               reason="needs mpirun (e.g. Debian's openmpi-bin) and mpi4py")


def mpirun(scenario, backend="cpu", *args, timeout=240, expect_ok=True):
    import tempfile
    results_dir = tempfile.mkdtemp(prefix="minidl-mpi-")
    env = dict(os.environ, DISTRIBUTED_RESULTS=results_dir, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none", MINIDL_NUM_THREADS="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    command = ["mpirun", "-np", "2", "--bind-to", "none", sys.executable,
               os.path.join(HERE, "_distributed_ranks.py"), scenario, backend, *args]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
        written = sorted(os.listdir(results_dir))
        if not expect_ok:
            done.results_written = written
            return done
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert written == ["rank0.json", "rank1.json"], done.stdout[-3000:] + done.stderr[-3000:]
        results = []
        for name in written:
            with open(os.path.join(results_dir, name)) as f:
                results.append(json.load(f))
        return results, done.stdout
    finally:
        shutil.rmtree(results_dir, ignore_errors=True)


@needs_mpi
def test_collectives():
    (r0, r1), _ = mpirun("collectives", "numpy")
    assert (r0["rank"], r1["rank"], r0["size"]) == (0, 1, 2)
    for r in (r0, r1):
        assert r["local"][1] == 2 and r["cross"] == [0, 1]
        assert r["average"] == [0.5, 1.5, 2.5, 3.5, 4.5]
        assert r["sum"] == [1.0, 3.0, 5.0, 7.0, 9.0]
        assert r["max"] == [1.0, 2.0, 3.0, 4.0, 5.0]
        exact = (np.arange(5) + 0.5) / 3
        assert np.allclose(r["fp16"], exact, rtol=2e-3) and not np.array_equal(r["fp16"], r["average"])
        assert np.allclose(r["bf16"], exact, rtol=1e-2)
        assert r["gather"] == [[0, 0], [1, 1], [1, 1]]
        assert r["bcast"] == [1.0, 1.0]
    assert r0["fp16"] == r1["fp16"] and r0["bf16"] == r1["bf16"]


@needs_mpi
@pytest.mark.parametrize("backend", ["numpy", "cpu", "opencl"])
def test_two_ranks_equal_one_process_on_the_global_batch(backend):
    from minidl.backends import available_backends
    if backend not in available_backends():
        pytest.skip(f"the {backend} backend is not available here")
    (r0, r1), _ = mpirun("equivalence", backend)
    for a, b in zip(r0["weights"], r1["weights"]):
        assert np.array_equal(a, b)            # bitwise: every rank applies the same update
    assert r0["loss"] == r1["loss"]            # MetricAverageCallback
    for a, b in zip(r0["weights"], r0["reference"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@needs_mpi
@pytest.mark.parametrize("backend", ["numpy", "cpu", "opencl"])
def test_synchronized_batchnorm_equals_one_process_on_the_global_batch(backend):
    from minidl.backends import available_backends
    if backend not in available_backends():
        pytest.skip(f"the {backend} backend is not available here")
    (r0, r1), _ = mpirun("syncbn", backend)
    for a, b, c in zip(r0["weights"], r1["weights"], r0["reference"]):
        assert np.array_equal(a, b)
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=2e-6)   # moving statistics included
    # and it is not what each rank's own batch statistics would give
    assert any(not np.allclose(a, c, rtol=1e-3) for a, c in zip(r0["unsynchronized"], r0["reference"]))


@needs_mpi
def test_backward_passes_per_step_aggregates_locally():
    (r0, r1), _ = mpirun("passes", "cpu")
    assert r0["iterations"] == r1["iterations"] == 2    # 4 batches of 8, 2 passes a step: 2 updates
    for a, b, c in zip(r0["weights"], r1["weights"], r0["reference"]):
        assert np.array_equal(a, b)
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-6)


@needs_mpi
def test_compressed_gradients_train_and_keep_ranks_equal():
    (r0, r1), _ = mpirun("compressed", "cpu")
    for name in ("fp16", "bf16"):
        assert r0[name]["loss"][-1] < r0[name]["loss"][0]
        for a, b in zip(r0[name]["weights"], r1[name]["weights"]):
            assert np.array_equal(a, b)


@needs_mpi
def test_mismatched_models_are_named_at_the_broadcast():
    (r0, r1), _ = mpirun("mismatch", "numpy")
    for r in (r0, r1):
        assert r["error"] is not None and "rank 1" in r["error"] and "same model" in r["error"]


@needs_mpi
def test_files_and_progress_on_rank_zero_only(tmp_path):
    (r0, r1), stdout = mpirun("files", "numpy", str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["ckpt_rank0.minidl", "log_rank0.csv"]
    assert stdout.count("Epoch 1/1") == 1


@needs_mpi
def test_resume_from_rank_zeros_checkpoint_is_bitwise(tmp_path):
    (r0, r1), _ = mpirun("resume", "cpu", str(tmp_path))
    for r in (r0, r1):
        assert r["optimizer"] == "_DistributedMixin" and r["epochs"] == 3
        for a, b in zip(r["straight"], r["resumed"]):
            assert np.array_equal(a, b)


@needs_mpi
def test_learning_rate_warmup_follows_horovods_formula():
    (r0, r1), _ = mpirun("warmup", "numpy")
    assert r0["lr"] == r1["lr"]
    # 2 steps per epoch: the batches end at epochs 0.5, 1, 1.5, 2 of the 2 warm-up epochs
    expected = [0.4 / 2 * (e * (2 - 1) / 2 + 1) for e in (0.5, 1, 1.5, 2)] + [0.4, 0.4]
    np.testing.assert_allclose(r0["lr"], expected, rtol=1e-6)


@needs_mpi
@pytest.mark.parametrize("scenario", ["raise", "die"])
def test_a_failing_rank_stops_the_job(scenario):
    done = mpirun(scenario, "numpy", timeout=120, expect_ok=False)
    assert done.returncode != 0
    assert done.results_written == []
    if scenario == "raise":
        assert "rank 1 of 2 failed with RuntimeError: injected failure" in done.stderr


# ----------------------------------------------------------- without an MPI job
def test_shard_gives_equal_interleaved_parts():
    x, y = np.arange(10), np.arange(10) * 2
    a, b = hvd.shard(x, y, rank=1, size=3)
    assert a.tolist() == [1, 4, 7] and b.tolist() == [2, 8, 14]   # sample 9 left out: 3 each
    assert hvd.shard(x, rank=0, size=3).tolist() == [0, 3, 6]
    with pytest.raises(ValueError, match="rank must be in"):
        hvd.shard(x, rank=3, size=3)
    with pytest.raises(ValueError, match="array 1 has 4 samples"):
        hvd.shard(x, np.arange(4), rank=0, size=2)


def test_calls_before_init_say_so():
    if hvd.is_initialized():
        pytest.skip("initialized by another test")
    with pytest.raises(ValueError, match="call minidl.distributed.init"):
        hvd.rank()
    assert hvd.is_primary()


def test_distributed_optimizer_arguments():
    from minidl import optimizers
    opt = hvd.DistributedOptimizer(optimizers.Adam(0.003))
    assert type(opt).__name__ == "Adam" and isinstance(opt, optimizers.Adam)
    assert opt.get_config()["learning_rate"] == 0.003
    with pytest.raises(ValueError, match="backward_passes_per_step must be a positive int"):
        hvd.DistributedOptimizer(optimizers.SGD(), backward_passes_per_step=0)
    with pytest.raises(ValueError, match="op must be Average or Sum"):
        hvd.DistributedOptimizer(optimizers.SGD(), op=hvd.Max)
    with pytest.raises(TypeError, match="expected a minidl optimizer"):
        hvd.DistributedOptimizer("sgd")
    with pytest.raises(ValueError, match="already a DistributedOptimizer"):
        hvd.DistributedOptimizer(opt)


def test_single_process_training_is_unchanged(active_backend):
    """Without an MPI job of several ranks the wrapper is the optimizer itself."""
    import minidl
    from minidl import layers, optimizers
    from minidl.models import Sequential
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(32, 5)).astype(np.float32), rng.integers(0, 2, 32)
    runs = []
    for wrap in (False, True):
        minidl.set_seed(5)
        model = Sequential([layers.Input((5,)), layers.Dense(4, activation="relu"), layers.Dense(2)])
        opt = optimizers.SGD(0.1)
        model.compile(hvd.DistributedOptimizer(opt) if wrap else opt,
                      minidl.losses.SparseCategoricalCrossentropy(from_logits=True))
        model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False)
        runs.append(model.get_weights())
    for a, b in zip(*runs):
        assert np.array_equal(a, b)


def test_bf16_compression_rounds_to_nearest_even():
    from minidl.distributed.collectives import Compression
    values = np.array([1.0, 1.00390625, 1.01171875, -2.5, np.inf, np.nan], dtype=np.float32)
    back = Compression.bf16.decompress(Compression.bf16.compress(values))
    assert back[:5].tolist() == [1.0, 1.0, 1.015625, -2.5, np.inf]   # ties to even
    assert np.isnan(back[5])


def test_synchronized_batchnorm_alone_is_ordinary_batchnorm(active_backend):
    import minidl
    from minidl import layers, optimizers
    from minidl.models import Sequential
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(16, 4, 4, 2)).astype(np.float32), rng.integers(0, 2, 16)
    runs = []
    for synchronized in (False, True):
        minidl.set_seed(2)
        bn = layers.BatchNormalization(synchronized=synchronized)
        model = Sequential([layers.Input((4, 4, 2)), layers.Conv2D(3, 3), bn, layers.Flatten(),
                            layers.Dense(2, activation="softmax")])
        model.compile(optimizers.SGD(0.1), "sparse_categorical_crossentropy")
        model.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)
        runs.append(model.get_weights())
        assert bn.get_config()["synchronized"] is synchronized
        assert layers.BatchNormalization.from_config(bn.get_config()).synchronized is synchronized
    for a, b in zip(*runs):
        assert np.array_equal(a, b)


def test_image_dataset_from_directory_shards_the_files(tmp_path):
    """shard=(rank, size): disjoint equal parts of the same shuffled order, labels kept."""
    pytest.importorskip("PIL")
    from PIL import Image
    from minidl.utils import image_dataset_from_directory
    for c in range(2):
        (tmp_path / f"class{c}").mkdir()
        for i in range(5):
            Image.fromarray(np.full((4, 4, 3), 10 * c + i, np.uint8)).save(tmp_path / f"class{c}" / f"{i}.png")
    parts = [image_dataset_from_directory(str(tmp_path), image_size=(4, 4), batch_size=2, seed=7,
                                          verbose=False, shard=(rank, 3)) for rank in range(3)]
    files = [p.file_paths for p in parts]
    assert [len(f) for f in files] == [3, 3, 3]              # 10 files: 3 each, one left out
    assert len(set(sum(files, []))) == 9
    for part in parts:
        x, y = part.x, part.y
        assert all(int(v[0, 0, 0]) // 10 == int(label) for v, label in zip(x, y))
    with pytest.raises(ValueError, match="pass a seed"):
        image_dataset_from_directory(str(tmp_path), image_size=(4, 4), verbose=False, shard=(0, 2))

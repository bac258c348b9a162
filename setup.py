from setuptools import find_packages, setup

setup(
    name="minidl",
    version="0.1.0",
    description="A small, fast, Keras-style deep-learning framework for CPUs and OpenCL devices",
    python_requires=">=3.9",
    packages=find_packages(include=["minidl", "minidl.*"]),
    package_data={"minidl.backends.opencl": ["kernels/*.cl"]},
    include_package_data=True,
    setup_requires=["cffi>=1.15"],
    cffi_modules=["csrc/build_cpu.py:ffibuilder"],
    # pyopencl by default, so that --backend opencl works after the quick start; the OpenCL
    # driver (ICD) stays a system package, whose absence the opencl backend explains
    install_requires=["numpy>=1.26", "cffi>=1.15", "tqdm>=4.60", "pyopencl>=2022.1"],
    extras_require={
        "opencl": ["pyopencl>=2022.1"],
        "image": ["pillow>=9.1"],   # minidl.preprocessing.image's files, image_dataset_from_directory
        "distributed": ["mpi4py>=3.1"],   # minidl.distributed; needs an MPI library (openmpi-bin)
        "tensorboard": ["tensorboard>=2.10"],   # callbacks.TensorBoard's event files
        "keras-files": ["h5py>=3.8"],   # .keras, .h5 and .weights.h5 files (minidl/keras_files)
        "onnx": ["onnx>=1.14"],         # model.export(path, format="onnx")
        "openvino": ["onnx>=1.14", "openvino>=2024.0"],   # model.export(path, format="openvino")
        "test": ["pytest>=7", "hypothesis>=6", "pyopencl>=2022.1", "pydot>=1.4", "pillow>=9.1",
                 "scipy>=1.8",   # scipy: tests/test_image_utils.py's reference affine transform
                 "mpi4py>=3.1", "tensorboard>=2.10", "h5py>=3.8", "onnx>=1.14", "onnxruntime>=1.16",
                 "openvino>=2024.0"],
    },
)

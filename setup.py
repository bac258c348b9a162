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
    install_requires=["numpy>=1.26", "cffi>=1.15", "tqdm>=4.60"],
    extras_require={
        "opencl": ["pyopencl>=2022.1"],
        "image": ["pillow>=9.1"],   # minidl.preprocessing.image's files, image_dataset_from_directory
        "keras-files": ["h5py>=3.8"],   # .keras, .h5 and .weights.h5 files (minidl/keras_files)
        "onnx": ["onnx>=1.14"],         # model.export(path, format="onnx")
        "test": ["pytest>=7", "hypothesis>=6", "pyopencl>=2022.1", "pydot>=1.4", "pillow>=9.1",
                 "h5py>=3.8", "onnx>=1.14", "onnxruntime>=1.16"],
    },
)

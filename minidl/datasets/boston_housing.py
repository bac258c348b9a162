"""Boston housing prices (Harrison and Rubinfeld, 1978) as keras.datasets.boston_housing returns them.

506 districts, 13 features each, and the median home value in k$. load_data reads Keras's
boston_housing.npz (x (506, 13), y (506,); found as locate.py says), shuffles it with
np.random.RandomState(seed) and keeps the last test_split of it for testing.
"""

from . import housing
from .locate import ORIGIN_FOLDER, locate_file

TITLE = "Boston housing"
SHA256 = "f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5"
FEATURES, SAMPLES = 13, 506


def load_data(path="boston_housing.npz", test_split=0.2, seed=113):
    """((x_train, y_train), (x_test, y_test)) as keras.datasets.boston_housing.load_data."""
    housing.check_test_split(test_split)
    file_path = locate_file(TITLE, path, ORIGIN_FOLDER + "boston_housing.npz", SHA256)
    x, y = housing.read_xy(TITLE, file_path, FEATURES, SAMPLES)
    return housing.shuffle_split(x, y, test_split, seed)

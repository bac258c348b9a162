"""California housing prices (Pace and Barry, 1997) as keras.datasets.california_housing returns them.

20,640 block groups of the 1990 census, 8 features each (MedInc, HouseAge, AveRooms,
AveBedrms, Population, AveOccup, Latitude, Longitude), and the median house value in dollars.
version="small" keeps the first 600 rows, as Keras does, before shuffling with
np.random.RandomState(seed) and splitting off the last test_split.
"""

from . import housing
from .locate import ORIGIN_FOLDER, locate_file

TITLE = "California housing"
SHA256 = "1a2e3a52e0398de6463aebe6f4a8da34fb21fbb6b934cf88c3425e766f2a1a6f"
FEATURES, SAMPLES, SMALL_SAMPLES = 8, 20640, 600


def load_data(version="large", path="california_housing.npz", test_split=0.2, seed=113):
    """((x_train, y_train), (x_test, y_test)) as keras.datasets.california_housing.load_data."""
    housing.check_test_split(test_split)
    if version not in ("small", "large"):
        raise ValueError("Argument `version` must be one of 'small', 'large'. "
                         f"Received: version={version}")
    file_path = locate_file(TITLE, path, ORIGIN_FOLDER + "california_housing.npz", SHA256)
    x, y = housing.read_xy(TITLE, file_path, FEATURES, SAMPLES)
    if version == "small":
        x, y = x[:SMALL_SAMPLES], y[:SMALL_SAMPLES]
    return housing.shuffle_split(x, y, test_split, seed)

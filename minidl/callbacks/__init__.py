"""Keras-style callbacks: hooks the training loop calls at the start and end of training,
epochs and batches, and when fit() is interrupted (Callback.on_interrupt).

The logs passed to the batch hooks are a Mapping whose values may live on a device:
reading one forces a device->host copy, so callbacks read batch logs only when they
need them (ProgressBar at its refresh interval, TerminateOnNaN every batch). Epoch-end
logs are a plain dict of floats.

Model attributes callbacks use: stop_training, optimizer, fit_state, save(path),
save_weights(path), get_weights(), set_weights(weights).

One module per callback; MonitorCallback (monitor.py) holds the one rule by which
ModelCheckpoint, EarlyStopping and ReduceLROnPlateau tell an improvement.
"""

from .backup_and_restore import BackupAndRestore
from .base import Callback, CallbackList
from .csv_logger import CSVLogger
from .early_stopping import EarlyStopping
from .freeze_weights import FreezeWeights
from .history import History
from .lambda_callback import LambdaCallback
from .learning_rate_scheduler import LearningRateScheduler
from .lookahead import Lookahead
from .model_checkpoint import ModelCheckpoint
from .monitor import MonitorCallback
from .progbar_logger import ProgbarLogger
from .progress_bar import ProgressBar
from .reduce_lr_on_plateau import ReduceLROnPlateau
from .swap_ema_weights import SwapEMAWeights
from .tensorboard import TensorBoard
from .terminate_on_nan import TerminateOnNaN

__all__ = ["Callback", "CallbackList", "History", "ProgressBar", "MonitorCallback",
           "ModelCheckpoint", "EarlyStopping", "LearningRateScheduler", "ReduceLROnPlateau",
           "CSVLogger", "TerminateOnNaN", "Lookahead", "FreezeWeights", "BackupAndRestore",
           "LambdaCallback", "ProgbarLogger", "SwapEMAWeights", "TensorBoard"]

/* Keras's losses along the last axis of (rows, k) predictions against dense targets: the kinds
 * of minidl/backends/base.py's ROW_LOSSES, by their position there (enum minidl_row_loss). */
#ifndef MINIDL_ROW_LOSS_H
#define MINIDL_ROW_LOSS_H

#include <stdint.h>

/* loss (rows) = the loss of each row; delta is Huber's; kind is checked by the caller (one of
 * ROW_LOSSES' positions) */
void minidl_row_loss_forward(float *loss, const float *pred, const float *targets, int kind, float delta,
                             int64_t rows, int64_t k);
/* dpred (rows, k) = d loss / d pred * scale */
void minidl_row_loss_backward(float *dpred, const float *pred, const float *targets, int kind, float delta,
                              float scale, int64_t rows, int64_t k);

#endif

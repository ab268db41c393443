/* rndv.h: the rendezvous half of the protocol: clear-to-send, the DATA that answers it, and,
 * over shared memory, single-copy pulls and split copies (both processes copy at once). */
#ifndef CSNI_RNDV_H
#define CSNI_RNDV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/conn.h"
#include "core/op.h"

/* A receive op (marked WAIT_DATA, its pp, token and msglen set) matched an RTS: answer CTS.
 * op->t's lock held. */
void csni_rndv_send_cts(struct csni_op *op, uint64_t sender_token);
/* Copies the message straight from the sender's memory (pid, raddr), then tells the sender
 * (CTS PULLED). split (the receive was posted before the RTS, read under its connection's
 * reader lock, and large): the sender is asked to write the second part itself. No transport
 * or peer lock held. False when the kernel refuses (fall back to csni_rndv_send_cts). */
bool csni_rndv_pull(struct csni_op *op, pid_t pid, uint64_t raddr, uint64_t sender_token,
                    bool split);
/* The reader's answers to CTS and DATA headers (c's reader lock held). */
void csni_rndv_on_cts(struct csni_conn *c, const struct csni_frame *f);
void csni_rndv_on_data(struct csni_conn *c, const struct csni_frame *f, struct csni_place *pl);
/* A DATA chunk of pl's receive is placed. */
void csni_rndv_data_placed(const struct csni_frame *f, const struct csni_place *pl);

#endif

/* procs.c: nettest's six exchange procedures, exactly as seed 001 describes them. */
#include "procs.h"

/* A completed receive: its status must be ok; the length goes to rlen for the check. */
static void procs_received(struct nt_ctx *c, const comm_req *r)
{
    if (r->status != 0)
        comm_abort(3, "%s, size %zu: receive from rank %d failed: %s", nt_test_names[c->test],
                   c->len, r->peer, comm_status_string(r->status));
    c->rlen[r->peer] = r->len;
}

static void procs_sent(struct nt_ctx *c, const comm_req *r)
{
    if (r->status != 0)
        comm_abort(3, "%s, size %zu: send to rank %d failed: %s", nt_test_names[c->test], c->len,
                   r->peer, comm_status_string(r->status));
}

/* The bidirectional exchange with the n neighbours nb[]: non-blocking sends to all, then
 * non-blocking receives from all, then wait for all of them. */
static void procs_bidirectional(struct nt_ctx *c, const int *nb, int n)
{
    comm_req *req = c->req;
    for (int k = 0; k < n; k++)
        comm_isend(c->sbuf[nb[k]], c->len, nb[k], &req[k]);
    for (int k = 0; k < n; k++)
        comm_irecv(c->rbuf[nb[k]], c->len, nb[k], &req[n + k]);
    comm_waitall(2 * n, req);
    for (int k = 0; k < n; k++) {
        procs_sent(c, &req[k]);
        procs_received(c, &req[n + k]);
    }
}

/* Star: the centre (rank 0) exchanges as in the bidirectional case; every other node
 * first receives from the centre (blocking), then sends its message to it. */
static void procs_star(struct nt_ctx *c, const int *nb, int n)
{
    if (c->me == 0) {
        procs_bidirectional(c, nb, n);
        return;
    }
    comm_req r = {0};
    r.status = comm_recv(c->rbuf[0], c->len, 0, &r.len, &r.peer);
    procs_received(c, &r);
    r.status = comm_send(c->sbuf[0], c->len, 0);
    r.peer = 0;
    procs_sent(c, &r);
}

/* Chaos: send to every higher rank, post receives from all; as each message arrives, a
 * message from a lower rank j is answered with this rank's message to j. */
static void procs_chaos(struct nt_ctx *c)
{
    int nr = 0, ns = 0;
    comm_req *rreq = c->req, *sreq = c->req + c->np;
    for (int j = c->me + 1; j < c->np; j++)
        comm_isend(c->sbuf[j], c->len, j, &sreq[ns++]);
    for (int j = 0; j < c->np; j++)
        if (j != c->me)
            comm_irecv(c->rbuf[j], c->len, j, &rreq[nr++]);
    for (int got = 0; got < nr; got++) {
        int k = -1;
        comm_waitany(nr, rreq, &k);
        if (k < 0)
            comm_abort(3, "Chaos: waitany found no receive to wait for");
        procs_received(c, &rreq[k]);
        int j = rreq[k].peer;
        if (j < c->me)
            comm_isend(c->sbuf[j], c->len, j, &sreq[ns++]);
    }
    comm_waitall(ns, sreq);
    for (int k = 0; k < ns; k++)
        procs_sent(c, &sreq[k]);
}

/* Ring: send to the right neighbour and receive from the left, wait for both; then send
 * to the left and receive from the right, wait for both. A ring of two nodes is one link
 * crossed once each way: rank 0 sends in the first step, rank 1 answers in the second. */
static void procs_ring(struct nt_ctx *c)
{
    int r = (c->me + 1) % c->np, l = (c->me + c->np - 1) % c->np;
    comm_req *req = c->req;
    if (c->np == 2) {
        int peer = 1 - c->me;
        for (int step = 0; step < 2; step++) {
            if ((step == 0) == (c->me == 0)) {
                comm_isend(c->sbuf[peer], c->len, peer, &req[0]);
                comm_waitall(1, req);
                procs_sent(c, &req[0]);
            } else {
                comm_irecv(c->rbuf[peer], c->len, peer, &req[0]);
                comm_waitall(1, req);
                procs_received(c, &req[0]);
            }
        }
        return;
    }
    comm_isend(c->sbuf[r], c->len, r, &req[0]);
    comm_irecv(c->rbuf[l], c->len, l, &req[1]);
    comm_waitall(2, req);
    procs_sent(c, &req[0]);
    procs_received(c, &req[1]);
    comm_isend(c->sbuf[l], c->len, l, &req[0]);
    comm_irecv(c->rbuf[r], c->len, r, &req[1]);
    comm_waitall(2, req);
    procs_sent(c, &req[0]);
    procs_received(c, &req[1]);
}

double nt_iteration(struct nt_ctx *c, enum nt_test t)
{
    int n = nt_neighbours(t, c->np, c->me, c->nb);
    c->test = t;

    comm_barrier();
    double t0 = comm_wtime();
    switch (t) {
    case NT_STAR:
        procs_star(c, c->nb, n);
        break;
    case NT_STAR2:
    case NT_CHAOS2:
    case NT_RING2:
        procs_bidirectional(c, c->nb, n);
        break;
    case NT_CHAOS:
        procs_chaos(c);
        break;
    case NT_RING:
        procs_ring(c);
        break;
    default:
        break;
    }
    comm_barrier();
    return comm_wtime() - t0;
}

/* rxhello.c: the sink of the free CSN's hello example, written against its API (csn/meiko.h
 * maps it; this file includes only <csn.h>, as such programs do). */
#include <csn.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    transport tpt;
    unsigned int actual;
    netid id;
    csn_status status;
    char buffer[80];

    if (csn_open(&tpt) != CsnOk)
        debugf("failed to open transport");
    if (csn_registername(tpt, "sink") != CsnOk)
        debugf("failed to register name");
    id = csn_nullnetid; /* receive from anyone */
    status = csn_rx(tpt, &id, &buffer, sizeof(buffer), &actual);
    if (status == CsnOk)
        printf("sink received string: %s containing %d bytes\n", buffer, actual);
    else {
        debugf("csn_rx failed");
        exit(1);
    }
    /* Then a non-blocking receive, answered with a non-blocking send, both tested. */
    {
        netid from;
        void *a;
        csn_status s;
        unsigned int n;
        int value = 0;
        if (rxnb(tpt, &value, sizeof value, &n) != CsnOk ||
            csn_test(tpt, CsnRx, (unsigned int)-1, &from, &a, &s) != CsnRxReady || s != CsnOk ||
            a != &value || from.ip != id.ip || from.port != id.port) {
            debugf("rxnb/csn_test failed");
            exit(1);
        }
        value++;
        if (csn_txnb(tpt, from, &value, sizeof value) != CsnOk ||
            csn_test(tpt, CsnTx, (unsigned int)-1, &from, &a, &s) != CsnTxReady || s != CsnOk) {
            debugf("csn_txnb/csn_test failed");
            exit(1);
        }
        printf("sink answered %d\n", value);
    }
    csn_close(&tpt);
    exit(0);
}

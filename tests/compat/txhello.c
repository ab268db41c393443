/* txhello.c: the source of the free CSN's hello example, written against its API. */
#include <csn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    transport tpt;
    netid sink;
    char buffer[80];
    int value = 41, answer = 0;
    unsigned int actual;

    if (csn_open(&tpt) != CsnOk)
        debugf("failed to open transport");
    if (csn_lookupname(&sink, "sink") != CsnOk) {
        debugf("failed to lookup sink");
        exit(1);
    }
    strcpy(buffer, "Hello world");
    if (csn_tx(tpt, sink, buffer, strlen(buffer) + 1) != CsnOk) {
        debugf("csn_tx failed");
        exit(1);
    }
    if (txnb(tpt, sink, &value, sizeof value) != CsnOk) {
        debugf("txnb failed");
        exit(1);
    }
    {
        netid n;
        void *a;
        csn_status s;
        if (csn_test(tpt, CsnTx, (unsigned int)-1, &n, &a, &s) != CsnTxReady || s != CsnOk) {
            debugf("csn_test failed");
            exit(1);
        }
    }
    if (csn_rx(tpt, &sink, &answer, sizeof answer, &actual) != CsnOk || answer != 42 ||
        actual != sizeof answer) {
        debugf("no answer");
        exit(1);
    }
    csn_nameserver("unused");
    csn_close(&tpt);
    exit(0);
}

/* check.c: nettest's payload pattern, a function of sender, receiver, message and offset. */
#include <string.h>

#include "nettest.h"

/* Word i of a message is seed + i*STEP (in the host's byte order; all ranks of a job share
 * it). The seed mixes sender, receiver and message number, so a message delivered to the
 * wrong buffer, a stale message of an earlier iteration, or bytes shifted by any offset
 * all differ from the expected pattern. */
#define CHECK_STEP 0x9E3779B97F4A7C15ull

static uint64_t check_mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x7FB5D329728EA185ull;
    x ^= x >> 27;
    x *= 0x81DADEF4BC2DD44Dull;
    x ^= x >> 33;
    return x;
}

static uint64_t check_seed(int from, int to, uint64_t msgno)
{
    uint64_t pair = (uint64_t)(uint32_t)from << 32 | (uint32_t)to;
    return check_mix(pair ^ check_mix(msgno + CHECK_STEP));
}

/* The fill and the check run between every two iterations of every test, outside the timed
 * window but on a CPU that ranks may share: a rank still filling holds the CPU a neighbour
 * needs to end its window, so their speed shows in the figures. Both take four words a turn
 * and start at a 64-byte line, their loops too (-falign-loops=64, CMakeLists.txt), so that
 * they run alike in every nettest binary (csn's, Open MPI's, nettest-lean): with one word a
 * turn, the loop's place in the binary made the fill two to four times slower in some of them
 * than in others (BENCHMARKS.md, issue 19). */
#define CHECK_ALIGNED __attribute__((aligned(64)))

CHECK_ALIGNED void nt_fill(void *buf, size_t len, int from, int to, uint64_t msgno)
{
    unsigned char *p = buf;
    uint64_t w = check_seed(from, to, msgno);
    size_t i = 0;
    for (; i + 32 <= len; i += 32, w += 4 * CHECK_STEP) {
        uint64_t w1 = w + CHECK_STEP, w2 = w + 2 * CHECK_STEP, w3 = w + 3 * CHECK_STEP;
        memcpy(p + i, &w, 8);
        memcpy(p + i + 8, &w1, 8);
        memcpy(p + i + 16, &w2, 8);
        memcpy(p + i + 24, &w3, 8);
    }
    for (; i + 8 <= len; i += 8, w += CHECK_STEP)
        memcpy(p + i, &w, 8);
    if (i < len)
        memcpy(p + i, &w, len - i);
}

CHECK_ALIGNED size_t nt_verify(const void *buf, size_t len, int from, int to, uint64_t msgno,
                               unsigned char *got, unsigned char *want)
{
    const unsigned char *p = buf;
    uint64_t w = check_seed(from, to, msgno);
    size_t i = 0;
    /* Four words a turn while all match; the first mismatching block is looked at word by
     * word below. */
    for (; i + 32 <= len; i += 32, w += 4 * CHECK_STEP) {
        uint64_t x0, x1, x2, x3;
        memcpy(&x0, p + i, 8);
        memcpy(&x1, p + i + 8, 8);
        memcpy(&x2, p + i + 16, 8);
        memcpy(&x3, p + i + 24, 8);
        if (((x0 ^ w) | (x1 ^ (w + CHECK_STEP)) | (x2 ^ (w + 2 * CHECK_STEP)) |
             (x3 ^ (w + 3 * CHECK_STEP))) != 0)
            break;
    }
    for (; i + 8 <= len; i += 8, w += CHECK_STEP) {
        uint64_t x;
        memcpy(&x, p + i, 8);
        if (x != w)
            break;
    }
    if (i < len) {
        /* A mismatching word, or the tail: compare byte by byte. */
        unsigned char exp[8];
        memcpy(exp, &w, 8);
        size_t end = len - i < 8 ? len - i : 8;
        for (size_t k = 0; k < end; k++)
            if (p[i + k] != exp[k]) {
                *got = p[i + k];
                *want = exp[k];
                return i + k;
            }
    }
    return len;
}

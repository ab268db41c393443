/* replay_main.c: the driver of a fuzz target in the normal (gcc) build: runs the target once
 * on each file named on the command line (its seed corpus and the inputs of its past findings,
 * tests/fuzz/TARGET/corpus/), so every finding stays a regression test in CTest (and under
 * ASan/UBSan in make test-asan) without libFuzzer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    int i;

    for (i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        uint8_t *buf;
        long n;

        if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
            fseek(f, 0, SEEK_SET) != 0) {
            fprintf(stderr, "replay: cannot read %s\n", argv[i]);
            return 1;
        }
        buf = malloc((size_t)n + 1);
        if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
            fprintf(stderr, "replay: cannot read %s\n", argv[i]);
            return 1;
        }
        fclose(f);
        LLVMFuzzerTestOneInput(buf, (size_t)n);
        free(buf);
    }
    printf("replay: %d inputs, no finding\n", argc - 1);
    return 0;
}

/* probe.c: whether CSN_TRANSPORT=ofi can run here: the component is built and loads, and the
 * provider FI_PROVIDER names (the tests set it) opens. Exit 0 yes, 77 no (one line says why). */
#include <stdio.h>

#include "transport/ofi/ofi.h"

int main(void)
{
    if (csni_ofi_init(CSNI_OFI_RNDV_DEFAULT) != CSN_OK) {
        printf("SKIP: no usable libfabric provider for CSN_TRANSPORT=ofi (see the line above)\n");
        return 77;
    }
    printf("ofi probe: %s\n", csni_ofi_name());
    return 0;
}

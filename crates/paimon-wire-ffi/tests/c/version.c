/* Prints the version the header declares and the one the library reports:
 *   header=MAJOR.MINOR.PATCH abi=N library=VERSION library_abi=N */
#include <stdio.h>

#include "paimon_wire.h"

int main(void) {
  printf("header=%u.%u.%u abi=%u library=%s library_abi=%u\n", (unsigned)PAIMON_WIRE_VERSION_MAJOR,
         (unsigned)PAIMON_WIRE_VERSION_MINOR, (unsigned)PAIMON_WIRE_VERSION_PATCH,
         (unsigned)PAIMON_WIRE_ABI_VERSION, paimon_wire_version(), (unsigned)paimon_wire_abi_version());
  return 0;
}

/* Fuzz targets for the parsers that read untrusted input. Each target file
 * defines LLVMFuzzerTestOneInput; `make fuzz` links them with libFuzzer (clang),
 * and the Criterion suite test-fuzz-replay runs every corpus file through them
 * under the regular (and, in CI, sanitizer) build. */
#ifndef SB_FUZZ_H
#define SB_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif

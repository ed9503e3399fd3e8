/* A CUDA C program whose kernel writes 256 GiB past its buffer; it checks every call as CUDA's
 * samples do and prints the error on stderr: "an illegal memory access was encountered". */
#include <stdio.h>
#include <cuda_runtime.h>

#define CHECK(call)                                                                                 \
    do {                                                                                            \
        cudaError_t e_ = (call);                                                                    \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "CUDA error: %s (%s) at %s:%d\n", cudaGetErrorString(e_), cudaGetErrorName(e_), \
                    __FILE__, __LINE__);                                                            \
            return 1;                                                                               \
        }                                                                                           \
    } while (0)

__global__ void poke(float *p, long long far) { p[threadIdx.x + far] = 1.0f; }

int main(void)
{
    float *p;
    CHECK(cudaMalloc(&p, 1024 * sizeof(float)));
    poke<<<1, 256>>>(p, 1LL << 36);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    puts("no failure");
    return 0;
}

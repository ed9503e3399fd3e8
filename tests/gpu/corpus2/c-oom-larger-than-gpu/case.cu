/* A CUDA C program that asks cudaMalloc for 16 GiB more than the GPU has, printing the error's
 * name and text: "cudaErrorMemoryAllocation: out of memory". */
#include <stdio.h>
#include <cuda_runtime.h>

int main(void)
{
    size_t free_b = 0, total = 0;
    cudaMemGetInfo(&free_b, &total);
    size_t want = total + (16ULL << 30);
    void *p;
    cudaError_t e = cudaMalloc(&p, want);
    if (e != cudaSuccess) {
        fprintf(stderr, "cudaMalloc of %.1f GiB failed: %s: %s\n", want / 1073741824.0, cudaGetErrorName(e),
                cudaGetErrorString(e));
        return 1;
    }
    puts("no failure");
    return 0;
}

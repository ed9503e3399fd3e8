/* A CUDA C program whose kernel checks its indices with assert(): one is out of range, the
 * kernel prints "Assertion `...` failed." and the synchronisation returns cudaErrorAssert,
 * "device-side assert triggered". */
#include <assert.h>
#include <stdio.h>
#include <cuda_runtime.h>

__global__ void gather(const int *idx, const float *table, float *out, int rows)
{
    int i = threadIdx.x;
    assert(idx[i] < rows);
    out[i] = table[idx[i]];
}

int main(void)
{
    int h_idx[64], *idx;
    float *table, *out;
    for (int i = 0; i < 64; i++)
        h_idx[i] = i;  /* 0..63, the table has 32 rows */
    cudaMalloc(&idx, sizeof h_idx);
    cudaMalloc(&table, 32 * sizeof(float));
    cudaMalloc(&out, 64 * sizeof(float));
    cudaMemcpy(idx, h_idx, sizeof h_idx, cudaMemcpyHostToDevice);
    gather<<<1, 64>>>(idx, table, out, 32);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        fprintf(stderr, "CUDA error: %s (%s) after gather\n", cudaGetErrorString(e), cudaGetErrorName(e));
        return 1;
    }
    puts("no failure");
    return 0;
}
